package viewer

// DirBytes exposes dirBytes to the tests.
var DirBytes = dirBytes
