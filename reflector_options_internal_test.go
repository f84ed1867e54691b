package informer

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed31a95821/informer/reflector"
)

// TestReflectorOptionsCoverReflector keeps ReflectorOptions in step with
// reflector.Options: every field of the reflector's options is either the
// informer's own (set by New) or one of ReflectorOptions, of the same type,
// and reflectorOptions carries each one across. A field added to
// reflector.Options and forgotten here fails the test.
func TestReflectorOptionsCoverReflector(t *testing.T) {
	owned := map[string]bool{"Name": true, "ExpectedType": true, "ResyncPeriod": true, "ShouldResync": true, "OnError": true}
	ours := reflect.TypeFor[ReflectorOptions]()
	theirs := reflect.TypeFor[reflector.Options]()
	for f := range theirs.Fields() {
		if owned[f.Name] {
			continue
		}
		mine, ok := ours.FieldByName(f.Name)
		require.True(t, ok, "reflector.Options.%s is neither the informer's own nor in ReflectorOptions", f.Name)
		require.Equal(t, f.Type, mine.Type, "ReflectorOptions.%s", f.Name)
	}
	require.Equal(t, theirs.NumField()-len(owned), ours.NumField(), "ReflectorOptions has a field reflector.Options lacks")

	// Each field set alone must arrive, and nothing else with it.
	for f := range ours.Fields() {
		var o ReflectorOptions
		v := reflect.ValueOf(&o).Elem().FieldByIndex(f.Index)
		setNonZero(t, v)
		got := reflect.ValueOf(o.reflectorOptions())
		for g := range theirs.Fields() {
			field := got.FieldByIndex(g.Index)
			if g.Name == f.Name {
				require.Equal(t, v.Interface(), field.Interface(), "ReflectorOptions.%s is not carried across", f.Name)
			} else {
				require.True(t, field.IsZero(), "ReflectorOptions.%s set: reflector.Options.%s changed too", f.Name, g.Name)
			}
		}
	}
}

// setNonZero gives v a value other than its zero value.
func setNonZero(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Struct:
		setNonZero(t, v.Field(0))
	default:
		t.Fatalf("no non-zero value for a %s", v.Type())
	}
}
