/**
 * The key form's values (strings, as the inputs hold them) and the API's key shapes: `keyBody`
 * turns a form into the create / PATCH body (every field, so a PATCH replaces the whole policy),
 * `formOf` turns a key back into a form for editing. Pure: unit-tested in form.test.ts.
 */

/** The key as GET /v1/keys answers it (src/api/routes/keys.ts KeyView). */
export interface ApiKey {
  id: string;
  name: string;
  user_id: string;
  key_prefix: string;
  permissions: {
    models: string[];
    quota_limit: number | null;
    rate_limits: { requests_per_minute: number | null; tokens_per_hour: number | null };
    ip_whitelist: string[];
    expiry_date: string | null;
  };
  model_restrictions: { allowed_models: string[]; blocked_models: string[]; model_aliases: Record<string, string> };
  rate_limits: {
    requests_per_minute: number | null;
    requests_per_hour: number | null;
    tokens_per_hour: number | null;
    concurrent_requests: number | null;
    burst_allowance: { multiplier: number; duration: number } | null;
  };
  ip_restrictions: {
    allowed_ips: string[];
    blocked_ips: string[];
    geographic_restrictions: { allowed_countries: string[]; blocked_countries: string[] };
  };
  revoked: boolean;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
  /** Added by the list answer: credits spent by the key and its latest request. */
  usage?: { quota_used: number; last_used_at: string | null };
}

export interface CreatedKey extends ApiKey {
  key: string;
}

export interface KeyForm {
  name: string;
  models: string;
  allowedModels: string;
  blockedModels: string;
  aliases: string;
  quota: string;
  rpm: string;
  rph: string;
  tph: string;
  concurrency: string;
  burstMultiplier: string;
  burstDuration: string;
  allowedIps: string;
  blockedIps: string;
  allowedCountries: string;
  blockedCountries: string;
  /** A datetime-local value (the browser's time zone); '' = never expires. */
  expiry: string;
}

export const EMPTY_FORM: KeyForm = {
  name: '',
  models: '',
  allowedModels: '',
  blockedModels: '',
  aliases: '',
  quota: '',
  rpm: '',
  rph: '',
  tph: '',
  concurrency: '',
  burstMultiplier: '',
  burstDuration: '',
  allowedIps: '',
  blockedIps: '',
  allowedCountries: '',
  blockedCountries: '',
  expiry: '',
};

/** Why a field was refused (a message key of the area, with the offending text). */
export interface FieldProblem {
  field: keyof KeyForm;
  problem: 'required' | 'notCount' | 'notCredits' | 'notIp' | 'notCountry' | 'notAlias' | 'notMultiplier' | 'notDuration' | 'burstPair' | 'notDate';
  value?: string;
}

/** A list typed as text: items split on commas, spaces or new lines; blanks and repeats dropped. */
export function parseList(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map((s) => s.trim()).filter(Boolean))];
}

export const listText = (items: readonly string[]): string => items.join('\n');

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IPv4 or IPv6 address, or a CIDR range of one — the forms the key gate accepts. */
export function isIpRule(rule: string): boolean {
  const [address, bits, ...rest] = rule.split('/');
  if (rest.length > 0 || !address) return false;
  const v4 = IPV4.test(address);
  const v6 = !v4 && isIpv6(address);
  if (!v4 && !v6) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (v4 ? 32 : 128);
}

function isIpv6(address: string): boolean {
  if (!address.includes(':') || !/^[0-9a-fA-F:.]+$/.test(address)) return false;
  const halves = address.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const last = groups.at(-1) ?? '';
  const v4Tail = last.includes('.');
  if (v4Tail && !IPV4.test(last)) return false;
  const hex = v4Tail ? groups.slice(0, -1) : groups;
  if (!hex.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = hex.length + (v4Tail ? 2 : 0);
  return halves.length === 2 ? count < 8 : count === 8;
}

/** `alias=model` (or `alias -> model`, `alias: model`) per line. */
export function parseAliases(text: string): { aliases: Record<string, string>; bad: string[] } {
  const aliases: Record<string, string> = {};
  const bad: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const match = /^([^=:>\s]+)\s*(?:=|->|:)\s*(\S+)$/.exec(line);
    if (match) aliases[match[1]!] = match[2]!;
    else bad.push(line);
  }
  return { aliases, bad };
}

export const aliasText = (aliases: Record<string, string>): string =>
  Object.entries(aliases)
    .map(([alias, model]) => `${alias}=${model}`)
    .join('\n');

/** A whole positive number, '' = none (null). */
function count(text: string): number | null | 'bad' {
  const t = text.trim();
  if (!t) return null;
  return /^\d+$/.test(t) && Number(t) > 0 && Number.isSafeInteger(Number(t)) ? Number(t) : 'bad';
}

/** A datetime-local value (local time) as an ISO instant. */
export function expiryIso(local: string): string | null | 'bad' {
  if (!local.trim()) return null;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? 'bad' : at.toISOString();
}

/** An ISO instant as a datetime-local value in the browser's time zone (minutes). */
export function expiryLocal(iso: string | null): string {
  if (!iso) return '';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** The create / PATCH body, or what is wrong with the form. */
export function keyBody(form: KeyForm): { body: Record<string, unknown>; problems: [] } | { body: null; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const name = form.name.trim();
  if (!name) problems.push({ field: 'name', problem: 'required' });

  const counts = { rpm: count(form.rpm), rph: count(form.rph), tph: count(form.tph), concurrency: count(form.concurrency) };
  for (const [field, value] of Object.entries(counts)) if (value === 'bad') problems.push({ field: field as keyof KeyForm, problem: 'notCount', value: form[field as keyof KeyForm] });

  const quota = form.quota.trim();
  if (quota && !/^\d+(\.\d{1,6})?$/.test(quota)) problems.push({ field: 'quota', problem: 'notCredits', value: quota });

  const allowedIps = parseList(form.allowedIps);
  const blockedIps = parseList(form.blockedIps);
  for (const [field, list] of [['allowedIps', allowedIps], ['blockedIps', blockedIps]] as const) {
    const bad = list.find((rule) => !isIpRule(rule));
    if (bad !== undefined) problems.push({ field, problem: 'notIp', value: bad });
  }

  const allowedCountries = parseList(form.allowedCountries).map((c) => c.toUpperCase());
  const blockedCountries = parseList(form.blockedCountries).map((c) => c.toUpperCase());
  for (const [field, list] of [['allowedCountries', allowedCountries], ['blockedCountries', blockedCountries]] as const) {
    const bad = list.find((c) => !/^[A-Z]{2}$/.test(c));
    if (bad !== undefined) problems.push({ field, problem: 'notCountry', value: bad });
  }

  const { aliases, bad: badAliases } = parseAliases(form.aliases);
  if (badAliases.length > 0) problems.push({ field: 'aliases', problem: 'notAlias', value: badAliases[0] });

  const multiplier = form.burstMultiplier.trim();
  const duration = form.burstDuration.trim();
  let burst: { multiplier: number; duration: number | string } | null = null;
  if (multiplier || duration) {
    if (!multiplier || !duration) problems.push({ field: multiplier ? 'burstDuration' : 'burstMultiplier', problem: 'burstPair' });
    const m = Number(multiplier);
    if (multiplier && !(Number.isFinite(m) && m >= 1 && m <= 100)) problems.push({ field: 'burstMultiplier', problem: 'notMultiplier', value: multiplier });
    const durationOk = /^\d+$/.test(duration) ? Number(duration) > 0 : /^(?:\d+(?:ms|s|m|h))+$/.test(duration);
    if (duration && !durationOk) problems.push({ field: 'burstDuration', problem: 'notDuration', value: duration });
    if (multiplier && duration) burst = { multiplier: m, duration: /^\d+$/.test(duration) ? Number(duration) : duration };
  }

  const expiry = expiryIso(form.expiry);
  if (expiry === 'bad') problems.push({ field: 'expiry', problem: 'notDate', value: form.expiry });

  if (problems.length > 0) return { body: null, problems };
  const num = (v: number | null | 'bad') => (v === 'bad' ? null : v);
  return {
    problems: [],
    body: {
      name,
      permissions: { models: parseList(form.models), quota_limit: quota || null, expiry_date: expiry },
      model_restrictions: { allowed_models: parseList(form.allowedModels), blocked_models: parseList(form.blockedModels), model_aliases: aliases },
      rate_limits: {
        requests_per_minute: num(counts.rpm),
        requests_per_hour: num(counts.rph),
        tokens_per_hour: num(counts.tph),
        concurrent_requests: num(counts.concurrency),
        burst_allowance: burst,
      },
      ip_restrictions: {
        allowed_ips: allowedIps,
        blocked_ips: blockedIps,
        geographic_restrictions: { allowed_countries: allowedCountries, blocked_countries: blockedCountries },
      },
    },
  };
}

const numText = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

/** A key's settings as form values (for editing). */
export function formOf(key: ApiKey): KeyForm {
  const r = key.rate_limits;
  return {
    name: key.name,
    models: listText(key.permissions.models),
    // permissions.models falls back to allowed_models for old keys: show the second list only when it says more.
    allowedModels: sameList(key.model_restrictions.allowed_models, key.permissions.models) ? '' : listText(key.model_restrictions.allowed_models),
    blockedModels: listText(key.model_restrictions.blocked_models),
    aliases: aliasText(key.model_restrictions.model_aliases),
    quota: numText(key.permissions.quota_limit),
    rpm: numText(r.requests_per_minute),
    rph: numText(r.requests_per_hour),
    tph: numText(r.tokens_per_hour),
    concurrency: numText(r.concurrent_requests),
    burstMultiplier: numText(r.burst_allowance?.multiplier),
    burstDuration: numText(r.burst_allowance?.duration),
    allowedIps: listText(key.ip_restrictions.allowed_ips),
    blockedIps: listText(key.ip_restrictions.blocked_ips),
    allowedCountries: listText(key.ip_restrictions.geographic_restrictions.allowed_countries),
    blockedCountries: listText(key.ip_restrictions.geographic_restrictions.blocked_countries),
    expiry: expiryLocal(key.permissions.expiry_date),
  };
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export type KeyStatus = 'active' | 'revoked' | 'expired';

export function keyStatus(key: Pick<ApiKey, 'revoked' | 'permissions'>, now: number = Date.now()): KeyStatus {
  if (key.revoked) return 'revoked';
  const expiry = key.permissions.expiry_date;
  return expiry && Date.parse(expiry) <= now ? 'expired' : 'active';
}
