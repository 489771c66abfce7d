package memory

// NewGroupSync exposes the group commit to the external tests.
func NewGroupSync(flush func() error) interface{ Wait() error } { return newGroupSync(flush) }
