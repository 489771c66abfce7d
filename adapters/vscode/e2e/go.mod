module ignore
