package metrics

import (
	"encoding/binary"
	"errors"
	"math"
)

// A minimal protobuf decoder for the parts of tensorflow.Event that carry scalars
// (tensorflow/core/util/event.proto, framework/summary.proto, tensor.proto, tensor_shape.proto).
// Unknown fields are skipped, as protobuf requires; no protobuf dependency is needed for five messages.

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// TensorFlow DataType values (types.proto) that can hold a scalar metric.
const (
	dtFloat  = 1
	dtDouble = 2
	dtInt32  = 3
	dtInt64  = 9
)

var errProto = errors.New("malformed protobuf")

// protoBuf walks the fields of one message.
type protoBuf struct {
	b []byte
}

// next returns the next field's number, wire type and payload: the value for varint and fixed
// fields, the bytes for length-delimited ones.
func (p *protoBuf) next() (field int, wire int, v uint64, data []byte, err error) {
	key, err := p.varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	field, wire = int(key>>3), int(key&7)
	if field == 0 {
		return 0, 0, 0, nil, errProto
	}
	switch wire {
	case wireVarint:
		v, err = p.varint()
	case wireFixed64:
		if len(p.b) < 8 {
			return 0, 0, 0, nil, errProto
		}
		v, p.b = binary.LittleEndian.Uint64(p.b), p.b[8:]
	case wireFixed32:
		if len(p.b) < 4 {
			return 0, 0, 0, nil, errProto
		}
		v, p.b = uint64(binary.LittleEndian.Uint32(p.b)), p.b[4:]
	case wireBytes:
		var n uint64
		if n, err = p.varint(); err == nil {
			if n > uint64(len(p.b)) {
				return 0, 0, 0, nil, errProto
			}
			data, p.b = p.b[:n], p.b[n:]
		}
	default:
		err = errProto
	}
	return field, wire, v, data, err
}

func (p *protoBuf) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10 && i < len(p.b); i++ {
		c := p.b[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			p.b = p.b[i+1:]
			return v, nil
		}
	}
	return 0, errProto
}

// tbEvent is what rlsweep needs of a tensorflow.Event.
type tbEvent struct {
	step   int64
	values []tbValue
}

// tbValue is one Summary.Value: a tag, its plugin (from its metadata, "" when the event had none) and
// its scalar, if it holds one.
type tbValue struct {
	tag    []byte
	plugin []byte
	value  float64
	scalar bool // value holds a scalar: a simple_value, or a tensor with one float/double/int element
}

// decodeEvent decodes an Event message, appending its summary values to ev.values (reused).
func decodeEvent(b []byte, ev *tbEvent) error {
	ev.step = 0
	ev.values = ev.values[:0]
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, v, data, err := p.next()
		if err != nil {
			return err
		}
		switch {
		case field == 2 && wire == wireVarint:
			ev.step = int64(v)
		case field == 5 && wire == wireBytes:
			if err := decodeSummary(data, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeSummary(b []byte, ev *tbEvent) error {
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, _, data, err := p.next()
		if err != nil {
			return err
		}
		if field == 1 && wire == wireBytes {
			val, err := decodeValue(data)
			if err != nil {
				return err
			}
			ev.values = append(ev.values, val)
		}
	}
	return nil
}

func decodeValue(b []byte) (tbValue, error) {
	var val tbValue
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, v, data, err := p.next()
		if err != nil {
			return val, err
		}
		switch {
		case field == 1 && wire == wireBytes:
			val.tag = data
		case field == 2 && wire == wireFixed32:
			val.value, val.scalar = float64(math.Float32frombits(uint32(v))), true
		case field == 8 && wire == wireBytes:
			x, ok, err := decodeTensor(data)
			if err != nil {
				return val, err
			}
			if ok {
				val.value, val.scalar = x, true
			}
		case field == 9 && wire == wireBytes:
			if val.plugin, err = decodePluginName(data); err != nil {
				return val, err
			}
		}
	}
	return val, nil
}

// decodePluginName returns SummaryMetadata.plugin_data.plugin_name.
func decodePluginName(b []byte) ([]byte, error) {
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, _, data, err := p.next()
		if err != nil {
			return nil, err
		}
		if field == 1 && wire == wireBytes {
			q := protoBuf{data}
			for len(q.b) > 0 {
				f, w, _, name, err := q.next()
				if err != nil {
					return nil, err
				}
				if f == 1 && w == wireBytes {
					return name, nil
				}
			}
		}
	}
	return nil, nil
}

// tensorProto holds the fields of a TensorProto that can carry one scalar.
type tensorProto struct {
	dtype    uint64
	elements int64 // product of the shape's dims; 1 for a scalar (no dims)
	content  []byte
	floats   []byte // float_val, packed or not, as raw little-endian bytes
	doubles  []byte
	ints     []uint64 // int_val or int64_val
}

// decodeTensor returns the value of a tensor with exactly one float, double, int32 or int64 element.
func decodeTensor(b []byte) (float64, bool, error) {
	t := tensorProto{elements: 1}
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, v, data, err := p.next()
		if err != nil {
			return 0, false, err
		}
		if err := t.field(field, wire, v, data); err != nil {
			return 0, false, err
		}
	}
	if t.elements != 1 {
		return 0, false, nil
	}
	x, ok := t.scalar()
	return x, ok, nil
}

func (t *tensorProto) field(field, wire int, v uint64, data []byte) error {
	var err error
	switch {
	case field == 1 && wire == wireVarint:
		t.dtype = v
	case field == 2 && wire == wireBytes:
		t.elements, err = shapeElements(data)
	case field == 4 && wire == wireBytes:
		t.content = data
	case field == 5 && wire == wireBytes:
		t.floats = append(t.floats, data...)
	case field == 5 && wire == wireFixed32:
		t.floats = binary.LittleEndian.AppendUint32(t.floats, uint32(v))
	case field == 6 && wire == wireBytes:
		t.doubles = append(t.doubles, data...)
	case field == 6 && wire == wireFixed64:
		t.doubles = binary.LittleEndian.AppendUint64(t.doubles, v)
	case (field == 7 || field == 10) && wire == wireVarint:
		t.ints = append(t.ints, v)
	case (field == 7 || field == 10) && wire == wireBytes:
		q := protoBuf{data}
		for len(q.b) > 0 {
			x, err := q.varint()
			if err != nil {
				return err
			}
			t.ints = append(t.ints, x)
		}
	}
	return err
}

// scalar reads the single element from whichever field holds it.
func (t *tensorProto) scalar() (float64, bool) {
	switch t.dtype {
	case dtFloat:
		if b := firstOf(t.content, t.floats); len(b) == 4 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
		}
	case dtDouble:
		if b := firstOf(t.content, t.doubles); len(b) == 8 {
			return math.Float64frombits(binary.LittleEndian.Uint64(b)), true
		}
	case dtInt32:
		if len(t.content) == 4 {
			return float64(int32(binary.LittleEndian.Uint32(t.content))), true
		}
		if len(t.ints) == 1 {
			return float64(int32(t.ints[0])), true
		}
	case dtInt64:
		if len(t.content) == 8 {
			return float64(int64(binary.LittleEndian.Uint64(t.content))), true
		}
		if len(t.ints) == 1 {
			return float64(int64(t.ints[0])), true
		}
	}
	return 0, false
}

func firstOf(a, b []byte) []byte {
	if len(a) > 0 {
		return a
	}
	return b
}

// shapeElements returns the number of elements a TensorShapeProto describes (1 for rank 0), or -1
// when the rank is unknown or a dim is unknown.
func shapeElements(b []byte) (int64, error) {
	n := int64(1)
	p := protoBuf{b}
	for len(p.b) > 0 {
		field, wire, v, data, err := p.next()
		if err != nil {
			return 0, err
		}
		switch {
		case field == 3 && wire == wireVarint && v != 0:
			return -1, nil
		case field == 2 && wire == wireBytes:
			size, err := dimSize(data)
			if err != nil {
				return 0, err
			}
			if size < 0 {
				return -1, nil
			}
			n *= size
		}
	}
	return n, nil
}

func dimSize(b []byte) (int64, error) {
	p := protoBuf{b}
	var size int64
	for len(p.b) > 0 {
		field, wire, v, _, err := p.next()
		if err != nil {
			return 0, err
		}
		if field == 1 && wire == wireVarint {
			size = int64(v)
		}
	}
	return size, nil
}
