//! `rag`: retrieves the passages of its documents that best match a
//! templated query (BM25 in process, or an embeddings API).

use std::collections::HashSet;

use super::fields::ReadValue;
use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::json::{Json, Node as JNode};
use crate::model::FieldType;
use crate::read::Reader;
use crate::validate::{is_identifier, Validator};

crate::kind_fields! {
    /// Retrieves ranked passages.
    pub struct RagNode {
        /// Template (`{{field}}`) of the query.
        query: String = required("query"),
        documents: RagDocuments = required("documents"),
        #[schemars(default = "default_top_k", range(min = 1))]
        top_k: u32 = count("topK", default_top_k(), 10_000),
        #[schemars(default)]
        retriever: Retriever = or("retriever", Retriever::Bm25),
        /// An `array` field (passages `{ id, text, score }`) or a `string` field
        /// (texts joined by a blank line).
        output_key: String = required("outputKey"),
    }
}

pub fn default_top_k() -> u32 {
    4
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RagDocuments {
    /// A folder of `.md`/`.txt` files, relative to the document. The host
    /// reads it into a list at compile time.
    Path(String),
    List(Vec<RagDocument>),
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RagDocument {
    pub id: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Retriever {
    /// In-process BM25, no network.
    #[default]
    Bm25,
    /// An OpenAI-compatible `/embeddings` API, cosine similarity.
    Embedding {
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        base_url_env: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        api_key_env: Option<String>,
    },
}

/// What unreadable `documents` become (their problem already reported).
impl Default for RagDocuments {
    fn default() -> Self {
        RagDocuments::List(Vec::new())
    }
}

impl ReadValue for RagDocuments {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        match &n.value {
            Json::String(path) => Some(RagDocuments::Path(path.clone())),
            Json::Array(items) => Some(RagDocuments::List(
                items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| {
                        let w = "a document";
                        r.object_with(item, &format!("{p}/{i}"), w, |r, d| RagDocument {
                            id: r.req_str(d, "id", w),
                            text: r.req_str(d, "text", w),
                        })
                    })
                    .collect(),
            )),
            _ => {
                r.type_error(p, "a folder path or a list of { id, text }", n);
                None
            }
        }
    }
}

impl ReadValue for Retriever {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        let Some(mut o) = r.object(n, p) else {
            return Some(Retriever::Bm25);
        };
        let kind = match o.field("kind") {
            Some((kn, kp)) => r.enumerated(
                kn,
                &kp,
                "retriever kind",
                &[("bm25", "bm25"), ("embedding", "embedding")],
            ),
            None => {
                r.missing(&o, "kind", "`retriever`");
                None
            }
        };
        let out = match kind {
            Some("embedding") => Retriever::Embedding {
                model: r.opt_str(&mut o, "model"),
                base_url_env: r.opt_str(&mut o, "baseUrlEnv"),
                api_key_env: r.opt_str(&mut o, "apiKeyEnv"),
            },
            _ => Retriever::Bm25,
        };
        let what = match out {
            Retriever::Bm25 => "a `bm25` retriever",
            Retriever::Embedding { .. } => "an `embedding` retriever",
        };
        r.finish(o, what);
        Some(out)
    }
}

impl KindRules for RagNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);

        v.check_template(&self.query, format!("{at}/query"), id);
        match &self.documents {
            RagDocuments::Path(p) if p.trim().is_empty() => v.err(
                Diagnostic::error(&crate::codes::INVALID_VALUE, "`documents` is an empty path")
                    .at(format!("{at}/documents"))
                    .node(id)
                    .hint("name a folder of .md/.txt files, relative to this document"),
            ),
            RagDocuments::Path(_) => {}
            RagDocuments::List(docs) => {
                let mut seen = HashSet::new();
                for (j, d) in docs.iter().enumerate() {
                    if !seen.insert(d.id.as_str()) {
                        v.err(
                            Diagnostic::error(
                                &crate::codes::DUPLICATE_ID,
                                format!("document id `{}` is used twice", d.id),
                            )
                            .at(format!("{at}/documents/{j}/id"))
                            .node(id),
                        );
                    }
                }
            }
        }
        if let Retriever::Embedding {
            base_url_env,
            api_key_env,
            ..
        } = &self.retriever
        {
            for (key, value) in [("baseUrlEnv", base_url_env), ("apiKeyEnv", api_key_env)] {
                if let Some(name) = value.as_deref().filter(|name| !is_identifier(name)) {
                    v.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_ENV_NAME,
                            format!("`{name}` is not an environment variable name"),
                        )
                        .at(format!("{at}/retriever/{key}"))
                        .node(id)
                        .hint("name the variable, e.g. \"OPENAI_BASE_URL\"; never the value"),
                    );
                }
            }
        }
        if let Some(f) = v.field(&self.output_key) {
            if !matches!(f.ty, FieldType::String | FieldType::Array) {
                v.err(
                        Diagnostic::error(
                            &crate::codes::OUTPUT_TYPE,
                            format!(
                                "rag node `{}` writes passages to `{}`, {}; it needs an `array` field (passages) or a `string` field (their texts)",
                                id,
                                f.name,
                                f.describe()
                            ),
                        )
                        .at(format!("{at}/outputKey"))
                        .node(id),
                    );
            }
        }
    }
}
