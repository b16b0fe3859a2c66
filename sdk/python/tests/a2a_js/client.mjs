// The @a2a-js/sdk client against an A2A server (sdk/python/tests/test_a2a.py).
//
//   node client.mjs <base-url> <call-json>...
//
// Reads the agent card at both well-known paths, then makes each call, one
// JSON object: {"credential": "bearer" | "api_key" | "none", "secret": "...",
// "skill": "<skillId>", "text": "...", "protocol": "1.0" | "0.3",
// "stream": false}. A bearer token goes through the SDK's auth hook
// (createAuthenticatingFetchWithRetry), an API key as the X-API-Key header
// of a fetch wrapper. Prints one JSON line:
// {"cards": {<path>: {name, version, skills, schemes, interfaces} | {error}},
//  "calls": [{"ok": true, "kind", "role", "text", "protocol", "status"}
//            | {"ok": false, "error", "name", "status", "code"}]}
// where status is the HTTP status of the call's last answer.
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import { randomUUID } from 'node:crypto';

const CARD_PATHS = ['/.well-known/agent-card.json', '/.well-known/agent.json'];
const TIMEOUT_MS = 10000;

function fetchFor(call, seen) {
  // Notes the HTTP status of every answer: a refused stream's error keeps none.
  const recording = async (url, init) => {
    const response = await fetch(url, init);
    seen.status = response.status;
    return response;
  };
  if (call.credential === 'bearer') {
    // The SDK's hook: headers() before every request, no retry.
    return createAuthenticatingFetchWithRetry(recording, {
      headers: async () => ({ Authorization: `Bearer ${call.secret}` }),
      shouldRetryWithHeaders: async () => undefined,
    });
  }
  if (call.credential === 'api_key') {
    return (url, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('X-API-Key', call.secret);
      return recording(url, { ...init, headers });
    };
  }
  if (call.credential === 'none') {
    return recording;
  }
  throw new Error(`unknown credential mode ${JSON.stringify(call.credential)}`);
}

function textOf(parts) {
  return (parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('\n');
}

// The cards' summaries by path, and the first card as the SDK reads it.
async function readCards(base) {
  const resolver = new DefaultAgentCardResolver();
  const cards = {};
  let first;
  for (const path of CARD_PATHS) {
    try {
      const card = await resolver.resolve(base, path);
      first ??= card;
      cards[path] = {
        name: card.name,
        version: card.version,
        skills: card.skills.map((s) => s.id),
        schemes: Object.keys(card.securitySchemes ?? {}).sort(),
        interfaces: card.supportedInterfaces.map((i) => [
          i.protocolBinding,
          i.protocolVersion,
          i.url,
        ]),
      };
    } catch (e) {
      cards[path] = { error: String(e?.message ?? e) };
    }
  }
  return [cards, first];
}

async function makeCall(base, card, call, seen) {
  const fetchImpl = fetchFor(call, seen);
  const legacy = call.protocol === '0.3';
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat: { enabled: legacy } })],
    }),
  );
  let client;
  if (legacy) {
    // Only the card's 0.3 interface: the SDK's v0.3 transport (message/send).
    const supportedInterfaces = card.supportedInterfaces.filter(
      (i) => i.protocolVersion === '0.3',
    );
    client = await factory.createFromAgentCard({ ...card, supportedInterfaces });
  } else {
    client = await factory.createFromUrl(base); // the card at /.well-known/agent-card.json
  }
  const message = {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: 'text', value: call.text },
        metadata: undefined,
        filename: '',
        mediaType: '',
      },
    ],
    metadata: call.skill ? { skillId: call.skill } : undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const params = { tenant: '', message, configuration: undefined, metadata: undefined };
  const options = { signal: AbortSignal.timeout(TIMEOUT_MS) };
  let result;
  if (call.stream) {
    for await (const event of client.sendMessageStream(params, options)) {
      result = event.payload?.value ?? event;
    }
  } else {
    result = await client.sendMessage(params, options);
  }
  if (result && 'messageId' in result && 'parts' in result) {
    return {
      ok: true,
      kind: 'message',
      role: result.role,
      text: textOf(result.parts),
      protocol: client.protocolVersion,
      status: seen.status,
    };
  }
  return {
    ok: true,
    kind: 'other',
    result,
    protocol: client.protocolVersion,
    status: seen.status,
  };
}

function failure(e, seen) {
  return {
    ok: false,
    error: String(e?.message ?? e),
    name: e?.name ?? null,
    status: seen.status ?? null, // of the last HTTP answer
    code: e?.envelopeCode ?? null, // the error's code: JSON-RPC's, or the body's error.code
  };
}

async function main() {
  const [base, ...written] = process.argv.slice(2);
  if (!base) {
    throw new Error('usage: node client.mjs <base-url> <call-json>...');
  }
  const calls = written.map((w) => JSON.parse(w));
  const [cards, card] = await readCards(base);
  const results = [];
  for (const call of calls) {
    const seen = {};
    try {
      results.push(await makeCall(base, card, call, seen));
    } catch (e) {
      results.push(failure(e, seen));
    }
  }
  process.stdout.write(JSON.stringify({ cards, calls: results }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`client.mjs: ${e?.stack ?? e}\n`);
  process.exit(1);
});
