package glove

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// The file format, little-endian:
//
//	magic    "DIXGLOVE"
//	version  uint32 (1)
//	dims     uint32
//	count    uint32
//	flags    uint32 (reserved, 0)
//	words    count × (uvarint length, UTF-8 bytes), most frequent first
//	vectors  count × dims × float16
//	crc      uint32: CRC-32 (IEEE) of everything before it
//
// The word order is the frequency order: the embedder weights words by rank.
const (
	magic         = "DIXGLOVE"
	formatVersion = 1
	maxDims       = 4096
	maxWords      = 4 << 20
)

// Vectors is a loaded vectors file.
type Vectors struct {
	Dims  int
	Words []string // by frequency rank
	index map[string]int32
	data  []float32 // Words[i]'s vector at data[i*Dims:(i+1)*Dims]
}

// Vector returns the vector of word and its frequency rank (0 = most
// frequent), or ok false for an unknown word.
func (v *Vectors) Vector(word string) (vec []float32, rank int, ok bool) {
	i, ok := v.index[word]
	if !ok {
		return nil, 0, false
	}
	return v.data[int(i)*v.Dims : int(i+1)*v.Dims], int(i), true
}

// Write writes words and their vectors (all of dims values) in the file
// format.
func Write(w io.Writer, dims int, words []string, vectors [][]float32) error {
	if len(words) != len(vectors) {
		return fmt.Errorf("glove: %d words for %d vectors", len(words), len(vectors))
	}
	crc := crc32.NewIEEE()
	bw := bufio.NewWriter(io.MultiWriter(w, crc))
	bw.WriteString(magic)
	head := []uint32{formatVersion, uint32(dims), uint32(len(words)), 0}
	if err := binary.Write(bw, binary.LittleEndian, head); err != nil {
		return fmt.Errorf("glove: write: %w", err)
	}
	var lenBuf [binary.MaxVarintLen64]byte
	for _, word := range words {
		n := binary.PutUvarint(lenBuf[:], uint64(len(word)))
		bw.Write(lenBuf[:n])
		bw.WriteString(word)
	}
	var half [2]byte
	for i, vec := range vectors {
		if len(vec) != dims {
			return fmt.Errorf("glove: vector of %q has %d values, want %d", words[i], len(vec), dims)
		}
		for _, x := range vec {
			binary.LittleEndian.PutUint16(half[:], toHalf(x))
			bw.Write(half[:])
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("glove: write: %w", err)
	}
	if err := binary.Write(w, binary.LittleEndian, crc.Sum32()); err != nil {
		return fmt.Errorf("glove: write: %w", err)
	}
	return nil
}

// Read reads a vectors file.
func Read(r io.Reader) (*Vectors, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("glove: read: %w", err)
	}
	if len(raw) < len(magic)+20 || string(raw[:len(magic)]) != magic {
		return nil, errors.New("glove: not a docindex GloVe vectors file")
	}
	body, sum := raw[:len(raw)-4], binary.LittleEndian.Uint32(raw[len(raw)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("glove: vectors file is damaged or truncated (checksum mismatch); convert it again")
	}
	br := bytes.NewReader(body[len(magic):])
	var head [4]uint32
	if err := binary.Read(br, binary.LittleEndian, &head); err != nil {
		return nil, fmt.Errorf("glove: header: %w", err)
	}
	if head[0] != formatVersion {
		return nil, fmt.Errorf("glove: file format version %d, this build reads %d", head[0], formatVersion)
	}
	dims, count := int(head[1]), int(head[2])
	if dims <= 0 || dims > maxDims || count <= 0 || count > maxWords {
		return nil, fmt.Errorf("glove: implausible header: %d dimensions, %d words", dims, count)
	}
	v := &Vectors{Dims: dims, Words: make([]string, count), index: make(map[string]int32, count)}
	for i := range count {
		n, err := binary.ReadUvarint(br)
		if err != nil || n > 1024 || int(n) > br.Len() {
			return nil, fmt.Errorf("glove: word %d: bad length", i)
		}
		b := make([]byte, n)
		br.Read(b)
		v.Words[i] = string(b)
		if _, dup := v.index[v.Words[i]]; !dup {
			v.index[v.Words[i]] = int32(i)
		}
	}
	if br.Len() != count*dims*2 {
		return nil, fmt.Errorf("glove: %d bytes of vectors, want %d", br.Len(), count*dims*2)
	}
	rest := body[len(body)-br.Len():]
	v.data = make([]float32, count*dims)
	for i := range v.data {
		v.data[i] = fromHalf(binary.LittleEndian.Uint16(rest[2*i:]))
	}
	return v, nil
}

// toHalf converts to IEEE 754 binary16, rounding to nearest even; out of
// range values become infinities (GloVe values are far inside the range).
func toHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case (b>>23)&0xff == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is still correct
	}
	return sign | uint16(h)
}

func fromHalf(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}
