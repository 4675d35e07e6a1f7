package schemas_test

import (
	"fmt"

	"github.com/kiln-ai/kiln/schemas"
)

func ExampleValidator() {
	v, err := schemas.NewValidator()
	if err != nil {
		panic(err)
	}
	body := []byte(`{"error":{"message":"start kiln with --debug-state or KILN_DEBUG_STATE=1","type":"permission_error","param":null,"code":"debug_state_disabled"}}`)
	fmt.Println(v.Validate(schemas.ObservabilityID, "debug_disabled", body) == nil)
	fmt.Println(v.Validate(schemas.ObservabilityID, "debug_disabled", []byte(`{"error":{}}`)) == nil)
	// Output:
	// true
	// false
}
