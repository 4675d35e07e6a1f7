package telemetry

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestEngineFamiliesCoverSnapshot ties the engine's snapshot to its metric
// families: setting one snapshot field must change at least one family
// exactly when the field is not listed in engineUnexported. Adding a
// field to the engine's snapshot without mapping or listing it, mapping a
// listed one, or a family reading nothing, fails here.
func TestEngineFamiliesCoverSnapshot(t *testing.T) {
	values := func(s *EngineStats) []float64 {
		v := make([]float64, len(engineFamilies))
		for k, f := range engineFamilies {
			v[k] = f.v(s)
		}
		return v
	}
	var zero EngineStats
	base := values(&zero)
	read := make([]bool, len(engineFamilies))
	typ := reflect.TypeFor[EngineStats]()
	for i := range typ.NumField() {
		field := typ.Field(i)
		var s EngineStats
		fv := reflect.ValueOf(&s).Elem().Field(i)
		switch fv.Kind() {
		case reflect.Bool:
			fv.SetBool(true)
		case reflect.Int, reflect.Int64:
			if field.Type == reflect.TypeFor[time.Duration]() {
				fv.SetInt(int64(3 * time.Second))
			} else {
				fv.SetInt(3)
			}
		case reflect.Uint64:
			fv.SetUint(3)
		default:
			t.Fatalf("field %s: kind %v not handled by this test", field.Name, fv.Kind())
		}
		changed := false
		for k, v := range values(&s) {
			if v != base[k] {
				changed, read[k] = true, true
			}
		}
		listed := slices.Contains(engineUnexported, field.Name)
		switch {
		case changed && listed:
			t.Errorf("field %s feeds a family but is listed as unexported", field.Name)
		case !changed && !listed:
			t.Errorf("field %s feeds no kiln_batching_engine_* family: map it in engineFamilies or list it in engineUnexported", field.Name)
		}
	}
	for k, f := range engineFamilies {
		if !read[k] {
			t.Errorf("family %s reads no snapshot field", f.name)
		}
	}
	for _, name := range engineUnexported {
		if _, ok := typ.FieldByName(name); !ok {
			t.Errorf("engineUnexported lists %s, which the snapshot does not have", name)
		}
	}
}
