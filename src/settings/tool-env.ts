import { isAbsolute } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { envPrefix } from './env-prefix.js'
import { runEnv } from './run-env.js'

/** How one setting's value is checked: the rule and the words `details.allowed` shows for it. */
export type SettingRule =
  | { type: 'integer'; min: number; max: number }
  | { type: 'enum'; options: readonly string[] }
  | { type: 'url' }
  | { type: 'path' }
  | { type: 'text'; pattern: RegExp; allowed: string }
  /** A value only its reader can judge (it needs more than the value, e.g. a file's mode): checked there. */
  | { type: 'reader'; allowed: string }

/** A documented setting: its rule, its default, and what it does (docs/contract.md lists them). */
export type SettingSpec = SettingRule & { default?: string | number; description: string }

/**
 * The framework's own environment settings, `<BIN>_<NAME>`. Each is checked the moment a run starts, so a bad
 * value is one `E_CONFIG` envelope with `allowed`/`got`, never a retry loop or a crash deep inside a command.
 * (`<BIN>_FORMAT` is checked by the universal-flag scan; `<BIN>_TOKEN`/`_ACCOUNT`/`_CONFIRM_SECRET` by their readers,
 * as are the `reader` settings here: their rule needs more than the value.)
 */
export const FRAMEWORK_SETTINGS = {
  PROFILE: {
    type: 'text',
    pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    allowed: 'a name of 1-64 letters, digits, ".", "_" or "-"',
    default: 'default',
    description:
      'The environment the tool acts in; bound into confirm tokens, shown by `context`. A label the caller chooses: only a profile the system policy pins holds an agent (another is `E_CONFIG` `profile_pinned`).',
  },
  CREDENTIAL_STORE: {
    type: 'enum',
    options: ['auto', 'keychain', 'file'],
    default: 'auto',
    description: 'Where credentials are stored.',
  },
  HTTP_RETRIES: {
    type: 'integer',
    min: 0,
    max: 10,
    default: 2,
    description: 'Extra attempts of a retryable, idempotent upstream request.',
  },
  HTTP_TIMEOUT_MS: {
    type: 'integer',
    min: 1,
    max: 600_000,
    default: 10_000,
    description: 'Timeout of one upstream request, in milliseconds.',
  },
  KEYCHAIN_TIMEOUT_MS: {
    type: 'integer',
    min: 100,
    max: 120_000,
    default: 4_000,
    description: 'How long one call of the OS keychain may take, in milliseconds (a slow or prompting Secret Service).',
  },
  UPDATE_CHANNEL: {
    type: 'text',
    pattern: /^[a-z0-9][a-z0-9-]{0,31}$/,
    allowed: 'a channel name: lowercase letters, digits and "-"',
    description: 'The release channel `update` follows.',
  },
  UPDATE_API_URL: { type: 'url', description: 'The GitHub API `update` asks (GitHub Enterprise).' },
  UPDATE_SOURCE: {
    type: 'text',
    pattern: /^\S.*$/,
    allowed: '"github", an https:// mirror URL, or a directory',
    description: 'Where `update` finds releases.',
  },
  CONFIG_DIR: { type: 'path', description: "The tool's config dir (oclif's)." },
  DATA_DIR: { type: 'path', description: "The tool's data dir (oclif's)." },
  CACHE_DIR: { type: 'path', description: "The tool's cache dir (oclif's)." },
  STATE_URL: {
    type: 'reader',
    allowed: 'a postgres://, postgresql://, redis:// or rediss:// URL',
    description:
      "The fleet's shared state store (docs/fleet.md); overrides `agentcli.state.url`. Unset: machine-local files.",
  },
  MCP_SUBJECT: {
    type: 'reader',
    allowed: 'JSON {"iss": "<issuer>", "sub": "<subject>"}',
    description:
      'Set by `tool mcp --http` on each call it runs for an authenticated client: who the call acts for, bound into its principal (confirm tokens, idempotency, audit).',
  },
  CONFIRM_SECRET_FILE: {
    type: 'reader',
    allowed: 'the path of a key-ring file other users can neither read nor write',
    description: 'A file holding the confirm key ring (docs/fleet.md); not together with `<BIN>_CONFIRM_SECRET`.',
  },
} as const satisfies Record<string, SettingSpec>

/** Settings of every agentcli tool, by their full names (no tool prefix): switches for development and tests. */
export const AGENTCLI_SETTINGS = {
  AGENTCLI_NO_BUNDLE: { type: 'enum', options: ['0', '1'], description: 'Run from the modules, not the bundle.' },
  AGENTCLI_CODE_CACHE: { type: 'enum', options: ['0', '1'], description: "`0` turns the bundle's code cache off." },
  AGENTCLI_CODE_CACHE_DIR: { type: 'path', description: 'Where the code cache lives.' },
  AGENTCLI_VALIDATE_OUTPUT: {
    type: 'enum',
    options: ['0', '1'],
    description: '`1` validates every output against its declared schema (tests).',
  },
} as const satisfies Record<string, SettingSpec>

/** The name of one of {@link FRAMEWORK_SETTINGS}. */
export type FrameworkSetting = keyof typeof FRAMEWORK_SETTINGS

type ValueOf<S extends SettingRule> = S extends { type: 'integer' } ? number : string

/**
 * Check one value against its rule: the value, or `E_CONFIG` naming where it came from (`source`: the variable
 * or `config.json` key), with `allowed`, `got` and a fix.
 */
export function checkSetting<S extends SettingRule>(rule: S, raw: unknown, source: string): ValueOf<S> {
  const fail = (allowed: unknown): never => {
    throw new AgentError('E_CONFIG', `${source} is not valid (got: ${JSON.stringify(raw)})`, {
      details: { setting: source, allowed, got: raw, fix: `unset ${source}, or set it to ${describeRule(rule)}` },
    })
  }
  if (rule.type === 'integer') {
    const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN
    if (!Number.isSafeInteger(n) || n < rule.min || n > rule.max)
      fail({ type: 'integer', min: rule.min, max: rule.max })
    return n as ValueOf<S>
  }
  if (typeof raw !== 'string') return fail(describeRule(rule))
  if (rule.type === 'reader') return raw as ValueOf<S>
  if (rule.type === 'enum') {
    if (!rule.options.includes(raw)) fail([...rule.options])
  } else if (rule.type === 'path') {
    if (!isAbsolute(raw)) fail('an absolute path')
  } else if (rule.type === 'url') {
    if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) fail('an http:// or https:// URL')
  } else if (!rule.pattern.test(raw)) fail(rule.allowed)
  return raw as ValueOf<S>
}

function describeRule(rule: SettingRule): string {
  if (rule.type === 'integer') return `an integer from ${rule.min} to ${rule.max}`
  if (rule.type === 'enum') return `one of ${rule.options.join(', ')}`
  if (rule.type === 'url') return 'an http:// or https:// URL'
  if (rule.type === 'path') return 'an absolute path'
  return rule.allowed
}

export { envPrefix }

/** A tool's environment, read in one place: the prefix, raw values, and checked framework settings. */
export type ToolEnv = {
  /** The tool's bin name (`tasks`), whose prefix this is. */
  readonly bin: string
  /** `TASKS_` for bin `tasks`. */
  readonly prefix: string
  /** The full name of the tool's variable `name`: `TASKS_FORMAT` for `FORMAT`. */
  name(name: string): string
  /** The raw value of `<BIN>_<name>`, or undefined when unset or empty. */
  raw(name: string): string | undefined
  /** A framework setting, checked; undefined when unset. */
  get<N extends FrameworkSetting>(name: N): ValueOf<(typeof FRAMEWORK_SETTINGS)[N]> | undefined
  /** Check every framework setting (and `AGENTCLI_*` switch) that is set; the first bad one throws `E_CONFIG`. */
  checkAll(): void
}

/** The environment of the tool with this bin: the run's ({@link runEnv}) unless given. */
export function toolEnv(bin: string, env: NodeJS.ProcessEnv = runEnv()): ToolEnv {
  const prefix = envPrefix(bin)
  const raw = (name: string) => env[prefix + name] || undefined
  const get = <N extends FrameworkSetting>(name: N) => {
    const value = raw(name)
    return value === undefined ? undefined : checkSetting(FRAMEWORK_SETTINGS[name], value, prefix + name)
  }
  return {
    bin,
    prefix,
    name: (name: string) => prefix + name,
    raw,
    get: get as ToolEnv['get'],
    checkAll: () => {
      for (const name of Object.keys(FRAMEWORK_SETTINGS) as FrameworkSetting[]) get(name)
      for (const [name, rule] of Object.entries(AGENTCLI_SETTINGS))
        if (env[name]) checkSetting(rule as SettingRule, env[name], name)
    },
  }
}
