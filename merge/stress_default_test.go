//go:build !stress

package merge

// propSeeds and oneSidedSeeds are how many generated merges TestPropertiesGenerated and
// TestOneSidedAsTree check in `make test`; `make stress` builds with -tags stress for 300 and 400 (and
// make fuzz's FuzzTree explores further).
const propSeeds, oneSidedSeeds = 100, 200
