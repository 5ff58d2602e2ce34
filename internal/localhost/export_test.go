package localhost

var (
	EphemeralRange = ephemeralRange
	PickRange      = pickRange
)
