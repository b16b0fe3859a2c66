package graph

// connector__SVC_CAMEL__Render fills the {{field}} references of a text from the
// state (the __SVC_ID__ connector). The filling is the Go runtime's (fillFields,
// marketplace/README.md "Runtime helpers"): a connector calls the runtime
// instead of carrying a copy of it.
func connector__SVC_CAMEL__Render(template string, state State) string {
	return fillFields(template, state)
}
