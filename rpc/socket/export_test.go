package socket

// OlderProtocol is olderProtocol, for the tests.
var OlderProtocol = olderProtocol
