//! Differential test: random graphs (fixed seeds) of templates, routers,
//! parallel regions (nested, with `maxConcurrency`) and maps, compiled for
//! every target and asked the same requests; every target must answer the
//! same. Each template writes a field of its own or appends to one shared
//! `append` list, so the regions obey the IR's rules by construction, and
//! the answers show the merge order of every region.

use std::time::Duration;

use serde_json::{json, Value};
use svc_tests::service::{alike_on_every_target, build, compile, Service};

const SEEDS: [u64; 2] = [0x5eed_0061, 0x0dd_ba11];

/// A graph being drawn: its nodes, edges and the fields its templates write.
struct Draw {
    state: u64,
    count: usize,
    nodes: Vec<Value>,
    edges: Vec<Value>,
    fields: Vec<Value>,
}

impl Draw {
    fn roll(&mut self, below: u64) -> u64 {
        // xorshift64*: the same sequence on every run.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) % below
    }

    fn id(&mut self, prefix: &str) -> String {
        self.count += 1;
        format!("{prefix}{}", self.count)
    }

    fn connect(&mut self, exits: &[String], to: &str) {
        for e in exits {
            self.edges.push(json!({ "from": e, "to": to }));
        }
    }

    /// One to three parts in a row: the first node, and the nodes whose
    /// edge leads to what comes after.
    fn block(&mut self, depth: u32) -> (String, Vec<String>) {
        let parts = 1 + self.roll(3);
        let (first, mut exits) = self.part(depth);
        for _ in 1..parts {
            let (next, after) = self.part(depth);
            self.connect(&exits, &next);
            exits = after;
        }
        (first, exits)
    }

    fn part(&mut self, depth: u32) -> (String, Vec<String>) {
        let pick = if depth == 0 { 0 } else { self.roll(10) };
        match pick {
            0..=3 => self.template(),
            4..=5 => {
                let id = self.id("r");
                let (a, mut exits) = self.block(depth - 1);
                let (b, more) = self.block(depth - 1);
                exits.extend(more);
                let above = self.roll(10);
                self.nodes
                    .push(json!({ "id": id, "kind": "router", "branches": [
                    { "when": { "field": "k", "op": "gt", "value": above }, "to": a },
                    { "to": b } ] }));
                (id, exits)
            }
            6..=8 => {
                let (id, join) = (self.id("p"), self.id("j"));
                let mut firsts = Vec::new();
                for _ in 0..2 + self.roll(2) {
                    let (first, exits) = self.block(depth - 1);
                    self.connect(&exits, &join);
                    firsts.push(first);
                }
                let mut node =
                    json!({ "id": id, "kind": "parallel", "branches": firsts, "join": join });
                let most = self.roll(3);
                if most > 0 {
                    node["maxConcurrency"] = json!(most);
                }
                self.nodes.push(node);
                self.nodes.push(json!({ "id": join, "kind": "join" }));
                (id, vec![join])
            }
            _ => {
                let id = self.id("m");
                let field = format!("out_{id}");
                self.fields
                    .push(json!({ "name": field, "type": "array", "items": { "type": "string" } }));
                let most = 1 + self.roll(3);
                self.nodes.push(json!({ "id": id, "kind": "map", "over": "words", "itemField": "w",
                    "input": { "q": "q" }, "output": "said", "outputKey": field,
                    "maxConcurrency": most,
                    "graph": { "irVersion": "2.2", "id": format!("say_{id}"), "logical": {
                        "state": [ { "name": "w", "type": "string", "required": true },
                                   { "name": "q", "type": "string" },
                                   { "name": "said", "type": "string" } ],
                        "nodes": [ { "id": "start", "kind": "start" },
                                   { "id": "say", "kind": "response_template", "template": "{{w}} to {{q}}", "outputKey": "said" },
                                   { "id": "end", "kind": "end" } ],
                        "edges": [ { "from": "start", "to": "say" }, { "from": "say", "to": "end" } ] } } }));
                (id.clone(), vec![id])
            }
        }
    }

    /// A template that appends to `notes`, or writes a field of its own
    /// from what earlier nodes wrote.
    fn template(&mut self) -> (String, Vec<String>) {
        let id = self.id("t");
        if self.roll(2) == 0 {
            self.nodes
                .push(json!({ "id": id, "kind": "response_template",
                "template": format!("{id}:{{{{q}}}}"), "outputKey": "notes" }));
        } else {
            let field = format!("f_{id}");
            self.fields.push(json!({ "name": field, "type": "string" }));
            self.nodes
                .push(json!({ "id": id, "kind": "response_template",
                "template": format!("{id}/{{{{k}}}}/{{{{notes}}}}"), "outputKey": field }));
        }
        (id.clone(), vec![id])
    }
}

fn document(seed: u64) -> Value {
    let mut d = Draw {
        state: seed,
        count: 0,
        nodes: vec![json!({ "id": "start", "kind": "start" })],
        edges: Vec::new(),
        fields: Vec::new(),
    };
    let (first, exits) = d.block(3);
    d.connect(&["start".to_string()], &first);
    d.connect(&exits, "end");
    d.nodes.push(json!({ "id": "end", "kind": "end" }));
    let mut state = vec![
        json!({ "name": "q", "type": "string", "required": true }),
        json!({ "name": "k", "type": "integer", "default": 0 }),
        json!({ "name": "words", "type": "array", "items": { "type": "string" }, "default": [] }),
        json!({ "name": "notes", "type": "array", "items": { "type": "string" }, "reducer": "append", "default": [] }),
    ];
    state.extend(d.fields);
    json!({
        "irVersion": "2.2",
        "id": format!("random_{seed:x}"),
        "security": { "auth": "none" },
        "logical": { "state": state, "nodes": d.nodes, "edges": d.edges,
                     "settings": { "maxSteps": 1000 } }
    })
}

#[test]
fn random_graphs_with_parallel_regions_and_maps_answer_alike_on_every_target() {
    // The seeds draw every construct, a parallel inside a branch included.
    let kinds: Vec<String> = SEEDS
        .iter()
        .flat_map(|s| {
            document(*s)["logical"]["nodes"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|n| n["kind"].as_str().map(str::to_string))
        .collect();
    for kind in ["parallel", "join", "map", "router", "response_template"] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "no {kind} drawn: {kinds:?}"
        );
    }
    let nested = SEEDS.iter().any(|s| {
        let text = document(*s).to_string();
        let doc = svc_ir::SourceFile::new("random.graph.json", text.as_str())
            .parse()
            .expect("a random graph is valid");
        let owners = doc.branch_owners();
        doc.logical.nodes.iter().any(|n| {
            matches!(n.kind, svc_ir::NodeKind::Parallel(_)) && owners.contains_key(n.id.as_str())
        })
    });
    assert!(nested, "no parallel drawn inside a branch");
    alike_on_every_target(run);
}

fn run(platform: &'static str) -> Vec<Value> {
    let requests = [
        json!({ "q": "a" }),
        json!({ "q": "b", "k": 5, "words": ["x", "y", "z"] }),
        json!({ "q": "c", "k": 9, "words": ["w"], "notes": ["given"] }),
    ];
    let mut answers = Vec::new();
    for seed in SEEDS {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("random.graph.json");
        let graph = document(seed);
        std::fs::write(&doc, graph.to_string()).unwrap();
        let project =
            compile(platform, &doc).unwrap_or_else(|d| panic!("{platform}: {graph}\n{d:?}"));
        build(&project).unwrap_or_else(|e| panic!("{platform}: {e}"));
        let service = Service::launch(&project, &[], Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("{platform}: {e}"));
        for state in &requests {
            let r = service
                .send(
                    "POST",
                    "/invoke",
                    &[("Content-Type", "application/json")],
                    json!({ "state": state }).to_string().as_bytes(),
                )
                .unwrap_or_else(|e| panic!("{platform}: {e}"));
            assert_eq!(r.status, 200, "{platform} seed {seed:x}: {}", r.json());
            answers.push(r.json()["result"].clone());
        }
    }
    answers
}
