package telemetry

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kiln-ai/kiln/internal/timing"
)

// snapshotLeaves lists the settable leaf fields of the engine's snapshot
// by path: a nested struct's fields as "PrefixCache.Bytes", every element
// of an array as one leaf ("PrefixCache.Evictions[2]").
func snapshotLeaves(t *testing.T, v reflect.Value, path string, out map[string]func(*timing.EngineSnapshot) reflect.Value, get func(*timing.EngineSnapshot) reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			snapshotLeaves(t, v.Field(i), name, out, func(s *timing.EngineSnapshot) reflect.Value { return get(s).Field(i) })
		}
	case reflect.Array:
		for i := range v.Len() {
			snapshotLeaves(t, v.Index(i), path+"["+strconv.Itoa(i)+"]", out, func(s *timing.EngineSnapshot) reflect.Value { return get(s).Index(i) })
		}
	default:
		out[path] = get
	}
}

// TestEngineFamiliesCoverSnapshot ties the engine's snapshot to its metric
// families: setting one snapshot field (each element of an array field
// alone) must change at least one family exactly when the field is not
// listed in engineUnexported. Adding a field to the engine's snapshot
// without mapping or listing it, mapping a listed one, or a family reading
// nothing, fails here.
func TestEngineFamiliesCoverSnapshot(t *testing.T) {
	values := func(s *timing.EngineSnapshot) []float64 {
		v := make([]float64, len(engineFamilies))
		for k, f := range engineFamilies {
			v[k] = f.v(s)
		}
		return v
	}
	var zero timing.EngineSnapshot
	base := values(&zero)
	read := make([]bool, len(engineFamilies))
	leaves := map[string]func(*timing.EngineSnapshot) reflect.Value{}
	snapshotLeaves(t, reflect.ValueOf(zero), "", leaves, func(s *timing.EngineSnapshot) reflect.Value { return reflect.ValueOf(s).Elem() })
	changedBy := map[string]bool{} // field (array fields without the index) -> some element changed a family
	for path, get := range leaves {
		var s timing.EngineSnapshot
		fv := get(&s)
		switch fv.Kind() {
		case reflect.Bool:
			fv.SetBool(true)
		case reflect.Int, reflect.Int64:
			if fv.Type() == reflect.TypeFor[time.Duration]() {
				fv.SetInt(int64(3 * time.Second))
			} else {
				fv.SetInt(3)
			}
		case reflect.Uint64:
			fv.SetUint(3)
		default:
			t.Fatalf("field %s: kind %v not handled by this test", path, fv.Kind())
		}
		changed := false
		for k, v := range values(&s) {
			if v != base[k] {
				changed, read[k] = true, true
			}
		}
		field, _, isElem := strings.Cut(path, "[")
		if isElem && !changed && !slices.Contains(engineUnexported, field) {
			t.Errorf("element %s feeds no family: every element of an array field needs its series", path)
		}
		changedBy[field] = changedBy[field] || changed
	}
	for field, changed := range changedBy {
		listed := slices.Contains(engineUnexported, field)
		switch {
		case changed && listed:
			t.Errorf("field %s feeds a family but is listed as unexported", field)
		case !changed && !listed:
			t.Errorf("field %s feeds no engine family: map it in engineFamilies or list it in engineUnexported", field)
		}
	}
	for k, f := range engineFamilies {
		if !read[k] {
			t.Errorf("family %s reads no snapshot field", f.name)
		}
	}
	for _, name := range engineUnexported {
		if _, ok := changedBy[name]; !ok {
			t.Errorf("engineUnexported lists %s, which the snapshot does not have", name)
		}
	}
}
