// Owns what pins a model's weights in a record: a digest (Ollama's, or one the
// user supplied with --model-digest), or an identifier of the loaded weights
// that names an exact revision (a Hugging Face snapshot path or id with a
// 40-hex commit, or a sha256). A bare name such as "Qwen/Qwen2.5-1.5B-Instruct"
// or "/models/qwen.gguf" can be replaced by other weights under the same name,
// so it pins nothing. Shared by the start-up check and the audit.

/** A 40-hex revision (a git commit, as Hugging Face snapshots use) or a 64-hex sha256, standing alone in the text. */
const REVISION = /(?:^|[^0-9a-f])([0-9a-f]{64}|[0-9a-f]{40})(?![0-9a-f])/i;

/** The revision that pins these weights, when the identifier names one. */
export function pinnedRevision(weights: string | null | undefined): string | undefined {
  if (typeof weights !== 'string') return undefined;
  return REVISION.exec(weights)?.[1]?.toLowerCase();
}

/** What `--model-digest` accepts: sha256:<64 hex>, 64 hex, or a 40-hex revision. Normalised: a sha256 always carries its prefix. */
export function normaliseModelDigest(text: string): string | undefined {
  const trimmed = text.trim().toLowerCase();
  if (/^(?:sha256:)?[0-9a-f]{64}$/.test(trimmed)) return trimmed.startsWith('sha256:') ? trimmed : `sha256:${trimmed}`;
  if (/^[0-9a-f]{40}$/.test(trimmed)) return trimmed;
  return undefined;
}

/** What pins a model actor: its digest, else the revision its weights name; undefined when nothing does. */
export function actorPin(actor: { digest?: unknown; weights?: unknown }): string | undefined {
  if (typeof actor.digest === 'string' && actor.digest.length > 0) return actor.digest;
  return pinnedRevision(typeof actor.weights === 'string' ? actor.weights : undefined);
}

/** The short form a record's actor and a run's first line show: a pin's first 12 hex characters, without `sha256:`. */
export function shortPin(pin: string): string {
  return pin.replace(/^sha256:/, '').slice(0, 12);
}
