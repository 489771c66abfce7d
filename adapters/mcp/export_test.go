package mcp

// ParseWhen exposes parseWhen to the tests.
var ParseWhen = parseWhen
