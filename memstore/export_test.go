package memstore

// Len is size, for the tests of package memstore_test.
func (s *Store) Len() int { return s.size() }
