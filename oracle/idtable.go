package oracle

// idTable maps identity hashes to windowed source records. The streaming
// check inserts and deletes one entry per record forever; Go maps keep
// tombstones under that churn and slow down, so this is an open-addressing
// table with linear probing and backward-shift deletion (no tombstones),
// key and value side by side so a lookup costs one cache miss. Keys are
// already well-mixed 64-bit hashes; key 0 is stored as 1 (the collision
// this adds is as unlikely as any other).
type idTable struct {
	slots []idSlot
	mask  uint64
	n     int
}

type idSlot struct {
	key uint64 // 0: empty
	val uint64 // packed entryRef
}

// An entryRef packs into 64 bits: lane in the top 20, position in the low 44.
const posBits = 44

func packRef(e entryRef) uint64   { return uint64(e.lane)<<posBits | uint64(e.pos)&(1<<posBits-1) }
func unpackRef(v uint64) entryRef { return entryRef{int32(v >> posBits), int64(v & (1<<posBits - 1))} }

func fixKey(k uint64) uint64 {
	if k == 0 {
		return 1
	}
	return k
}

func (t *idTable) get(k uint64) (entryRef, bool) {
	if t.n == 0 {
		return noEntryRef, false
	}
	k = fixKey(k)
	for i := k & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key {
		case k:
			return unpackRef(t.slots[i].val), true
		case 0:
			return noEntryRef, false
		}
	}
}

// getOrPut returns the value of k if present; else it inserts v.
func (t *idTable) getOrPut(k uint64, v entryRef) (entryRef, bool) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	k = fixKey(k)
	for i := k & t.mask; ; i = (i + 1) & t.mask {
		switch t.slots[i].key {
		case k:
			return unpackRef(t.slots[i].val), true
		case 0:
			t.slots[i] = idSlot{k, packRef(v)}
			t.n++
			return v, false
		}
	}
}

// put sets the value of k, which must be present.
func (t *idTable) put(k uint64, v entryRef) {
	k = fixKey(k)
	for i := k & t.mask; t.slots[i].key != 0; i = (i + 1) & t.mask {
		if t.slots[i].key == k {
			t.slots[i].val = packRef(v)
			return
		}
	}
	panic("oracle: idTable.put of a missing key")
}

func (t *idTable) del(k uint64) {
	if t.n == 0 {
		return
	}
	k = fixKey(k)
	i := k & t.mask
	for ; t.slots[i].key != k; i = (i + 1) & t.mask {
		if t.slots[i].key == 0 {
			return
		}
	}
	// Shift back every following entry that would be unreachable past the hole.
	for j := (i + 1) & t.mask; t.slots[j].key != 0; j = (j + 1) & t.mask {
		home := t.slots[j].key & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = idSlot{}
	t.n--
}

func (t *idTable) grow() {
	n := max(64, 2*len(t.slots))
	old := t.slots
	t.slots, t.mask, t.n = make([]idSlot, n), uint64(n-1), 0
	for _, s := range old {
		if s.key != 0 {
			t.getOrPut(s.key, unpackRef(s.val))
		}
	}
}
