package embedder

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Vectors travel as little-endian float32 bytes. On little-endian machines
// (all the usual ones) the conversion is a plain copy one way and no copy at
// all the other.

func nativeLittleEndian() bool { return binary.NativeEndian.Uint16([]byte{1, 0}) == 1 }

// floatsToBytes lays vecs, each of dims values, out row after row.
func floatsToBytes(vecs [][]float32, dims int) []byte {
	out := make([]byte, 4*dims*len(vecs))
	le := nativeLittleEndian()
	for i, v := range vecs {
		row := out[4*dims*i : 4*dims*(i+1)]
		if le && len(v) > 0 {
			copy(row, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v)))
			continue
		}
		for j, x := range v {
			binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(x))
		}
	}
	return out
}

// bytesToFloats reads the values of b; where it can, the result shares b's
// memory, which the decoder allocated for this message alone.
func bytesToFloats(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if nativeLittleEndian() && uintptr(p)%unsafe.Alignof(float32(0)) == 0 {
		return unsafe.Slice((*float32)(p), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
