package memory

// A FileAnchor is what an observation saw of one file when it was made:
// enough to tell later, without keeping the file, whether the code it
// talks about is still there (AnchorState).
type FileAnchor struct {
	// File is the file as the observation names it (FilesRead,
	// FilesModified); Path is where it was on this machine.
	File string `json:"file"`
	Path string `json:"path"`
	// Size and Hash (SHA-256, the first 16 bytes in hex) are the file's
	// when the event came.
	Size int64  `json:"size"`
	Hash string `json:"hash"`
	// Blob is the file's git blob id (what `git hash-object` prints),
	// when the file is in a git repository.
	Blob string `json:"blob,omitempty"`
	// Region is the text the tool wrote (an edit's new text, a written
	// file's first lines), as hashes of its non-blank lines, trimmed:
	// the region is still there while every one of them is a line of the
	// file. A read has none.
	Region []uint32 `json:"region,omitempty"`
	// Removed is the text an edit replaced, hashed the same way: an edit
	// whose Region is an earlier one's Removed and the other way round
	// undid it (Observation.Reverted).
	Removed []uint32 `json:"removed,omitempty"`
}

// The states of an observation's anchors (Observation.State, Hit.State):
// how what it saw compares with the files now. The worst anchor decides.
const (
	// StateCurrent: every file it saw is as it was.
	StateCurrent = "current"
	// StateChanged: a file changed since, but what it wrote is still in it
	// (or it only read the file).
	StateChanged = "changed"
	// StateGone: a file it saw is gone, or the text it wrote is no longer
	// in the file.
	StateGone = "gone"
	// StateReverted: an edit undone later in its session, or the edit
	// that undid it (Observation.Reverted): a dead end, never given as a
	// fact.
	StateReverted = "reverted"
	// StateSuperseded: a later observation says what is true now about
	// the same subject (Observation.SupersededBy): kept, shown with the
	// link, not given as a fact.
	StateSuperseded = "superseded"
	// StateWrong: a person marked it wrong (mnemo/markWrong): kept, shown
	// as wrong, never given as a fact.
	StateWrong = "wrong"
)
