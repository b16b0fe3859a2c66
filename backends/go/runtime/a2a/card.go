package a2a

import (
	"bytes"
	"encoding/json"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// parseCard reads an agent card in the 1.0 or the 0.3 layout (or both, as svc
// services publish it). A security requirement's scopes may be written as
// ProtoJSON writes them, {"list": [...]} (a2a-sdk for Python does), which
// the SDK's parser does not take (a2aproject/a2a-go#430): they are
// rewritten to plain lists first.
func parseCard(body []byte) (*a2asdk.AgentCard, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	flattenScopes(doc["securityRequirements"])
	if skills, ok := doc["skills"].([]any); ok {
		for _, s := range skills {
			if skill, ok := s.(map[string]any); ok {
				flattenScopes(skill["securityRequirements"])
			}
		}
	}
	normalised, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return a2av0.NewAgentCardParser()(normalised)
}

func flattenScopes(requirements any) {
	list, _ := requirements.([]any)
	for _, r := range list {
		req, _ := r.(map[string]any)
		schemes, _ := req["schemes"].(map[string]any)
		for name, scopes := range schemes {
			if obj, ok := scopes.(map[string]any); ok {
				inner, _ := obj["list"].([]any)
				if inner == nil {
					inner = []any{}
				}
				schemes[name] = inner
			}
		}
	}
}
