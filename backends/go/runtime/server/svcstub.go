//go:build svcstub

// A stand-in for what a generated project declares in package server
// (a2a_agent.go), for the repository only: the backend never copies this
// file (see ../graph/svcstub.go), nor testdata/svc-cases.json, the stub
// graph's test cases for cases_test.go (svc compile writes a project's).

package server

// The graph's A2A agent (settings.a2a): the agent card's title, description
// and skills, and the state field a message's text goes to.
func init() {
	RegisterA2A(A2ASpec{
		Title:       "Stub desk",
		Description: "Echoes the question.",
		Version:     "0.1.0",
		InputField:  "question",
		Skills: []A2ASkill{
			{ID: "echo", Name: "Echo", Description: "Echoes one question.", Tags: []string{"echo"}},
		},
	})
}
