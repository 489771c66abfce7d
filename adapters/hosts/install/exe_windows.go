package install

// exeSuffix ends the name of an executable file.
const exeSuffix = ".exe"
