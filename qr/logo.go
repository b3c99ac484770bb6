package qr

import "math"

// A logo is drawn over the centre of a QR code, on a quiet pad of the
// background colour that hides the modules beneath it. The decoder restores
// those modules from the error-correction codewords, so a code with a logo
// is always encoded at the highest level and the pad covers at most
// MaxLogoShare of the code's area: level H restores about 30 % of the
// codewords, and keeping the pad to 20 % leaves a third of that for wear,
// glare and the finder-free centre rows a camera misreads.
const (
	LogoLevel    = "H"
	MaxLogoShare = 0.20
)

// LogoPadModules returns the side, in modules, of the square pad a logo
// sits on in a code n modules across (without quiet zone): the largest side
// of the same parity as n, so that the pad is centred on whole modules,
// whose area is at most MaxLogoShare of n×n. It returns 0 when no pad fits.
func LogoPadModules(n int) int {
	s := int(math.Floor(math.Sqrt(MaxLogoShare * float64(n*n))))
	if s%2 != n%2 {
		s--
	}
	if s < 1 {
		return 0
	}
	return s
}

// ClearLogoPad sets the modules under the logo pad of bitmap to light, as
// drawing the pad does, and returns the pad's first module and side.
func ClearLogoPad(bitmap [][]bool) (start, side int) {
	n := len(bitmap)
	side = LogoPadModules(n)
	start = (n - side) / 2
	for y := start; y < start+side; y++ {
		for x := start; x < start+side; x++ {
			bitmap[y][x] = false
		}
	}
	return start, side
}
