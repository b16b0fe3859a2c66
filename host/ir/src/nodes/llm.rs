//! `llm`: one call of an OpenAI-compatible chat model, the reply written to
//! `outputKey` as one text or as a list; with `boundToolIds`, the
//! tool-calling loop of a worker over those tools.

use super::fields::ReadValue;
use super::{Here, KindRules};
use crate::diag::Diagnostic;
use crate::json::Node as JNode;
use crate::model::{Document, FieldType, StateField};
use crate::read::Reader;
use crate::requirements::Requirement;
use crate::validate::{Validator, TEXT_TARGETS};

crate::kind_fields! {
    /// A model call.
    pub struct LlmNode {
        output_key: String = required("outputKey"),
        /// Falls back to `settings.model`; normalization fills it in.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<ModelRef> = optional("model"),
        prompt: Prompt = required("prompt"),
        #[schemars(default = "default_output_shape")]
        output_shape: OutputShape = or("outputShape", OutputShape::Scalar),
        #[schemars(default)]
        replace_messages: bool = or("replaceMessages", false),
        #[serde(skip_serializing_if = "Vec::is_empty")]
        #[schemars(default)]
        bound_tool_ids: Vec<String> = or_empty("boundToolIds"),
    }
}

fn default_output_shape() -> OutputShape {
    OutputShape::Scalar
}

crate::kind_fields! {
    /// `{ system?, user }`, where `{{field}}` inserts a state field; empty
    /// components are not sent.
    #[derive(Default)]
    pub struct Prompt as "`prompt`" {
        #[serde(skip_serializing_if = "Option::is_none")]
        system: Option<String> = optional("system"),
        user: String = required("user"),
    }
}

/// A model: `{ provider, name, temperature?, maxTokens?, timeoutMs?,
/// retry?, fallbacks? }`; what it leaves out comes from `settings.model`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelRef {
    #[schemars(extend("enum" = ["openai", "anthropic"]))]
    pub provider: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 2_147_483_647))]
    pub max_tokens: Option<u32>,
    #[serde(flatten)]
    pub call: crate::model::CallPolicy,
    /// Models tried in order once this one's attempts are spent on
    /// failures worth retrying; absent: those of `settings.model`, `[]`:
    /// none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<Vec<crate::model::Fallback>>,
}

impl ReadValue for ModelRef {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        let w = "`model`";
        r.object_with(n, p, w, |r, m| ModelRef {
            provider: r.provider(m, w),
            name: r.req_str(m, "name", w),
            temperature: r.opt_f64(m, "temperature"),
            max_tokens: r
                .opt_positive(m, "maxTokens", crate::model::MAX_TOKENS_LIMIT)
                .and_then(|v| u32::try_from(v).ok()),
            call: r.call_policy(m),
            fallbacks: r.fallbacks(m),
        })
    }
}

/// How the reply is written: one text, or a list of the reply's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputShape {
    Scalar,
    List,
}

impl ReadValue for OutputShape {
    fn read(r: &mut Reader, n: &JNode, p: &str) -> Option<Self> {
        r.enumerated(
            n,
            p,
            "output shape",
            &[("scalar", OutputShape::Scalar), ("list", OutputShape::List)],
        )
    }
}

impl KindRules for LlmNode {
    fn output_key(&self) -> Option<&str> {
        Some(&self.output_key)
    }

    fn asks_model(&self) -> bool {
        true
    }

    fn validate<'a>(&'a self, v: &mut Validator<'a>, here: &Here<'a>) {
        let (at, id) = (here.at.as_str(), here.id);
        if self.model.is_none() && v.doc().logical.settings.model.is_none() {
            v.err(
                Diagnostic::error(
                    &MISSING_MODEL,
                    format!("llm node `{id}` names no model and `settings.model` is absent"),
                )
                .at(at)
                .node(id)
                .hint("add \"model\": { \"provider\": \"openai\", \"name\": \"gpt-4o-mini\" } to the node or to `logical.settings`"),
            );
        }
        if self.prompt.user.trim().is_empty() {
            v.err(
                Diagnostic::error(
                    &EMPTY_PROMPT,
                    format!("llm node `{id}` has an empty user prompt"),
                )
                .at(format!("{at}/prompt/user"))
                .node(id),
            );
        }
        if let Some(system) = &self.prompt.system {
            v.check_template(system, format!("{at}/prompt/system"), id);
        }
        v.check_template(&self.prompt.user, format!("{at}/prompt/user"), id);
        if let Some(f) = v.field(&self.output_key) {
            let structured = self.structured_output(v.doc()).is_some();
            let ok = match self.output_shape {
                OutputShape::Scalar => f.text_write().is_some() || structured,
                OutputShape::List => {
                    f.ty == FieldType::Array
                        && f.items.as_ref().is_none_or(|it| it.ty == FieldType::String)
                }
            };
            if !ok {
                let (shape, want) = match self.output_shape {
                    OutputShape::Scalar => ("scalar", TEXT_TARGETS),
                    OutputShape::List => ("list", "an `array` field of strings"),
                };
                let mut d = Diagnostic::error(
                    &crate::codes::OUTPUT_TYPE,
                    format!(
                        "llm node `{id}` writes {shape} output to `{}`, {}; it needs {want}",
                        f.name,
                        f.describe()
                    ),
                )
                .at(format!("{at}/outputKey"))
                .node(id);
                if f.ty == FieldType::Object {
                    d = d.hint(if self.bound_tool_ids.is_empty() && self.output_shape == OutputShape::Scalar {
                        "declare the field's `properties` to ask the model for an object of that shape (structured output)"
                    } else {
                        "structured output needs a node without `boundToolIds` and with `outputShape` `scalar`"
                    });
                }
                v.err(d);
            }
        }
        if let Some(f) = self.structured_output(v.doc()) {
            if let Some((below, what, fix)) = f.shape().strict_problem() {
                let i = v
                    .doc()
                    .logical
                    .state
                    .iter()
                    .position(|s| s.name == f.name)
                    .unwrap_or(0);
                let part = if below.is_empty() {
                    format!("`{}`", f.name)
                } else {
                    format!("`{}` at `{below}`", f.name)
                };
                v.err(
                    Diagnostic::error(
                        &OUTPUT_SCHEMA,
                        format!(
                            "llm node `{id}` asks the model for `{}` as structured output, which no provider can express: {part} {what}",
                            f.name
                        ),
                    )
                    .at(format!("/logical/state/{i}{below}"))
                    .node(id)
                    .hint(fix),
                );
            }
        }
        // `replaceMessages` says what happens to a `messages` list; on any
        // other output it would be accepted and do nothing.
        if self.replace_messages {
            if let Some(f) = v.field(&self.output_key) {
                if f.ty != FieldType::Messages {
                    v.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_VALUE,
                            format!(
                                "`replaceMessages` applies to a `messages` output, and `{}` is {}",
                                f.name,
                                f.describe()
                            ),
                        )
                        .at(format!("{at}/replaceMessages"))
                        .node(id)
                        .hint("remove `replaceMessages`, or write the reply to a `messages` field"),
                    );
                }
            }
        }
        for (j, tool) in self.bound_tool_ids.iter().enumerate() {
            v.check_tool_ref(tool, format!("{at}/boundToolIds/{j}"), id);
        }
    }

    fn requirements(&self, doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        if let Some(m) = &self.model {
            m.requirements(doc, &format!("{at}/model"), out);
        }
        if !self.bound_tool_ids.is_empty() {
            out.push(Requirement::feature(
                "llm.bound-tools",
                format!("{at}/boundToolIds"),
            ));
        }
        if self.structured_output(doc).is_some() {
            out.push(Requirement::feature(
                "llm.structured-output",
                format!("{at}/outputKey"),
            ));
        }
    }
}

impl LlmNode {
    /// The output field when the node asks for structured output: a scalar
    /// call without tools into an `object` field with `properties`.
    pub fn structured_output<'d>(&self, doc: &'d Document) -> Option<&'d StateField> {
        let f = doc.state_field(&self.output_key)?;
        (self.output_shape == OutputShape::Scalar
            && self.bound_tool_ids.is_empty()
            && f.ty == FieldType::Object
            && f.properties.is_some())
        .then_some(f)
    }
}

impl ModelRef {
    /// The models tried after this one (normalization lists them here).
    pub fn fallback_models(&self) -> &[crate::model::Fallback] {
        self.fallbacks.as_deref().unwrap_or_default()
    }

    /// What the model at `at` asks of a backend: `model.provider.<name>`
    /// (every built-in one: `openai`, any OpenAI-compatible
    /// chat-completions API) and the call features it names. What it took
    /// from `settings.model` is asked there, once.
    pub fn requirements(&self, doc: &Document, at: &str, out: &mut Vec<Requirement>) {
        let settings = doc.logical.settings.model.as_ref();
        let inherited = |call: &crate::model::CallPolicy, fallbacks: &[crate::model::Fallback]| {
            settings.is_some_and(|s| s.call == *call && s.fallbacks == fallbacks)
        };
        let own = (!inherited(&self.call, self.fallback_models()))
            .then(|| (self.call.clone(), self.fallback_models()));
        let (call, fallbacks) = own.unwrap_or_default();
        crate::requirements::model_requirements(&self.provider, &call, fallbacks, at, out);
    }
}

pub(crate) fn provider_feature(provider: &str) -> String {
    format!("model.provider.{provider}")
}

crate::diagnostic_codes! {
    /// An llm node's user prompt is empty.
    ///
    /// An `llm` node sends `prompt.user` (after filling its `{{placeholders}}`) as the user message; an empty or whitespace-only prompt would make every call ask nothing.
    ///
    /// Write the prompt, usually with placeholders for the state fields it needs.
    ///
    /// # Example
    ///
    /// ```json
    /// { "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "  " } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "Answer briefly: {{question}}" } }
    /// ```
    pub EMPTY_PROMPT = "empty-prompt", group "nodes";

    /// An llm node names no model and settings.model is absent.
    ///
    /// An `llm` node calls a model: either its own `model` or the default in `logical.settings.model`. With neither, the generated service would not know what to call.
    ///
    /// Add `model` to the node or a default to `logical.settings`.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/missing_model.graph.json`:
    ///
    /// ```json
    /// { "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "{{question}}" } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "reply", "kind": "llm", "outputKey": "answer", "prompt": { "user": "{{question}}" },
    ///   "model": { "provider": "openai", "name": "gpt-4o-mini" } }
    /// ```
    pub MISSING_MODEL = "missing-model", group "nodes";

    /// A structured-output field has a type no provider's strict mode can express.
    ///
    /// An `llm` node that writes an `object` field with `properties` sends the field's type as a JSON Schema in the providers' strict modes (OpenAI `json_schema` with `strict`, an Anthropic forced tool). Those modes need every object's keys and every array's items declared, at most 10 levels deep and 1000 properties in all; `messages` has no such schema.
    ///
    /// Declare the missing `properties` or `items`, or make the shape smaller. The diagnostic points at the part of the field's type that cannot be expressed.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/output_schema_open_object.graph.json`:
    ///
    /// ```json
    /// { "name": "invoice", "type": "object", "properties": { "lines": { "type": "array" } } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "name": "invoice", "type": "object", "properties": { "lines": { "type": "array", "items": { "type": "string" } } } }
    /// ```
    pub OUTPUT_SCHEMA = "output-schema", group "nodes";
}
