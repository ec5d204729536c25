//go:build stress

package merge

// propSeeds and oneSidedSeeds under -tags stress (make stress): 300 and 400 generated merges.
const propSeeds, oneSidedSeeds = 300, 400
