package link

import "hash/maphash"

// A NameSet is a set of strings that holds 16 bytes for each, not the
// string: two 64-bit hashes of it under seeds of its own, random for
// each set. A dry run of an import remembers every key and alias it met,
// up to a million of each, which as strings in a map took 110 MB. Two
// different strings meet only if both hashes agree, which for the 2
// million strings of a dry run happens with a probability under 10^-26
// and cannot be aimed at: the seeds are secret and new for every set.
// The zero NameSet is not usable: call NewNameSet.
type NameSet struct {
	seeds [2]maphash.Seed
	set   map[[16]byte]struct{}
}

// NewNameSet returns an empty set.
func NewNameSet() *NameSet {
	return &NameSet{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, set: map[[16]byte]struct{}{}}
}

// key is the set's key of the string parts make, one after the other.
func (s *NameSet) key(parts []string) [16]byte {
	var k [16]byte
	for i, seed := range s.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		for _, p := range parts {
			h.WriteString(p)
		}
		v := h.Sum64()
		for j := range 8 {
			k[8*i+j] = byte(v >> (8 * j))
		}
	}
	return k
}

// Add puts the string parts make, one after the other, in the set, and
// reports whether it was not there before.
func (s *NameSet) Add(parts ...string) bool {
	k := s.key(parts)
	if _, ok := s.set[k]; ok {
		return false
	}
	s.set[k] = struct{}{}
	return true
}

// Has reports whether the string parts make, one after the other, is in
// the set.
func (s *NameSet) Has(parts ...string) bool {
	_, ok := s.set[s.key(parts)]
	return ok
}

// Len is how many strings the set holds.
func (s *NameSet) Len() int { return len(s.set) }
