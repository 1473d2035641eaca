/**
 * Operator CLI, talking to the running accounts service over gRPC (ACCOUNTS_ADDR).
 *   npm run admin -- create-account --name NAME [--email EMAIL] [--password PW] [--features f1,f2]
 *   npm run admin -- create-key --account ID --mode test|live --name NAME
 *   npm run admin -- set-password --account ID --password PW
 *   npm run admin -- list-keys --account ID
 *   npm run admin -- delete-key --account ID --key ID
 *   npm run admin -- set-limits --account ID [--general N] [--reporting N]   (requests per 60 s; 0 = default)
 *   npm run admin -- rebuild-rollups --from ISO --to ISO   (recompute report rollups of a range from raw events)
 *   npm run admin -- load-events --account ID [--events N] [--days 30] [--zones 20] [--ad-items 5] [--run NAME]
 * Each command prints one JSON line.
 */
import { Mode, type ApiKey } from '../proto/gen/adserver/accounts/v1/accounts';
import { serviceAddress } from '../services/shared/config';
import { closeClients, present } from '../services/shared/grpc/client';
import { accounts, reports } from '../services/shared/grpc/clients';
import { loadSyntheticEvents } from './bench/synthetic-events';

type Args = Record<string, string>;

function parseArgs(argv: string[]): { command: string; args: Args } {
  const [command, ...rest] = argv;
  const args: Args = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}'`);
    const eq = a.indexOf('=');
    if (eq > 0) args[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      const next = rest[i + 1];
      if (next === undefined || next.startsWith('--')) args[a.slice(2)] = 'true';
      else {
        args[a.slice(2)] = next;
        i++;
      }
    }
  }
  return { command, args };
}

function need(args: Args, name: string): string {
  const v = args[name];
  if (!v || v === 'true') throw new Error(`--${name} is required`);
  return v;
}

function modeOf(s: string): Mode {
  if (s === 'test') return Mode.MODE_TEST;
  if (s === 'live') return Mode.MODE_LIVE;
  throw new Error('--mode must be test or live');
}

const keyOut = (k: ApiKey) => ({ id: k.id, account: k.accountId, mode: k.mode === Mode.MODE_TEST ? 'test' : 'live', name: k.name, prefix: k.prefix, created_date: k.createdAt, last_used: k.lastUsedAt || null });

async function run(command: string, args: Args): Promise<unknown> {
  switch (command) {
    case 'create-account': {
      const features = (args.features ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      const res = await accounts.createAccount({
        name: need(args, 'name'),
        email: args.email ?? '',
        password: args.password ?? '',
        features,
      }, { timeoutMs: 10_000 });
      const made = present(res.account, 'the account');
      const account: Record<string, unknown> = { id: made.id, name: made.name };
      if (made.email) account.email = made.email;
      if (made.features.length) account.features = made.features;
      return { account, keys: { test: res.testKey, live: res.liveKey } };
    }
    case 'create-key': {
      const res = await accounts.createApiKey({ accountId: Number(need(args, 'account')), mode: modeOf(need(args, 'mode')), name: need(args, 'name') }, { timeoutMs: 10_000 });
      return { key: keyOut(present(res.key, 'the key')), secret: res.secret };
    }
    case 'set-password': {
      const res = await accounts.setPassword({ accountId: Number(need(args, 'account')), password: need(args, 'password') }, { timeoutMs: 10_000 });
      return { account: { id: res.id, email: res.email || null, password_set: true } };
    }
    case 'list-keys': {
      const res = await accounts.listApiKeys({ accountId: Number(need(args, 'account')) }, { timeoutMs: 10_000, idempotent: true });
      return { keys: res.keys.map(keyOut) };
    }
    case 'delete-key': {
      const res = await accounts.deleteApiKey({ accountId: Number(need(args, 'account')), keyId: Number(need(args, 'key')) }, { timeoutMs: 10_000 });
      return { key: { id: res.keyId, deleted: true } };
    }
    case 'set-limits': {
      const limit = (name: string) => {
        const raw = args[name];
        if (raw === undefined) return undefined;
        if (!/^\d{1,7}$/.test(raw)) throw new Error(`--${name} must be a whole number of requests per 60 seconds (0 restores the default)`);
        return Number(raw);
      };
      const res = await accounts.setAccountLimits({
        accountId: Number(need(args, 'account')),
        generalLimit: limit('general'),
        reportingLimit: limit('reporting'),
      }, { timeoutMs: 10_000 });
      // 0 stored means "the platform default", shown as null.
      return { account: { id: res.accountId, limits: { general: res.generalLimit || null, reporting: res.reportingLimit || null } } };
    }
    case 'rebuild-rollups': {
      const res = await reports.rebuildRollups({ from: need(args, 'from'), to: need(args, 'to') }, { timeoutMs: 30 * 60_000 });
      return { rebuilt: { from: res.from, to: res.to, events: res.events, rollup_rows: res.rollupRows } };
    }
    case 'load-events': {
      const num = (name: string, fallback: number) => {
        const raw = args[name] ?? String(fallback);
        if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new Error(`--${name} must be a positive whole number`);
        return Number(raw);
      };
      const opts = { account: num('account', 0), events: num('events', 100_000), days: num('days', 30), zones: num('zones', 20), adItems: num('ad-items', 5), run: args.run ?? `load-${Date.now().toString(36)}` };
      const res = await loadSyntheticEvents(opts, num('batch', 5000), num('concurrency', 2));
      return { loaded: { account: opts.account, run: opts.run, events: opts.events, stored: res.stored, seconds: Number(res.seconds.toFixed(2)), events_per_second: Math.round(opts.events / res.seconds) } };
    }
    default:
      throw new Error(`unknown command '${command}'; commands: create-account, create-key, set-password, list-keys, delete-key, set-limits, rebuild-rollups, load-events`);
  }
}

const USAGE = `Usage: npm run admin -- COMMAND [--option value ...]   (each command prints one JSON line)

  create-account --name NAME [--email EMAIL] [--password PW] [--features f1,f2]
  create-key --account ID --mode test|live --name NAME
  set-password --account ID --password PW
  list-keys --account ID
  delete-key --account ID --key ID
  set-limits --account ID [--general N] [--reporting N]   requests per 60 s; 0 = the default
  rebuild-rollups --from ISO --to ISO                    recompute report rollups of a range from raw events
  load-events --account ID [--events N] [--days 30] [--zones 20] [--ad-items 5] [--run NAME]

It talks to the running platform's accounts service (ACCOUNTS_ADDR, default 127.0.0.1:50051); run it
with the platform's DATA_DIR or INTERNAL_TOKEN.
`;
const COMMANDS = ['create-account', 'create-key', 'set-password', 'list-keys', 'delete-key', 'set-limits', 'rebuild-rollups', 'load-events'];

const argv = process.argv.slice(2);
if (!argv.length || ['help', '--help', '-h'].includes(argv[0]) || argv.includes('--help')) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (!COMMANDS.includes(argv[0])) {
  process.stderr.write(`unknown command '${argv[0].slice(0, 64)}'\n\n${USAGE}`);
  process.exit(2);
}

const { command, args } = (() => {
  try {
    return parseArgs(argv);
  } catch (err) {
    process.stderr.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
    process.exit(2);
  }
})();

run(command, args)
  .then((out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`);
    closeClients();
  })
  .catch((err: { details?: string; message?: string; code?: number }) => {
    const message =
      err.code === 14
        ? `cannot reach the accounts service at ${serviceAddress('accounts')}; is the platform running (npm start)?`
        : err.code === 16
          ? 'the accounts service refused this CLI: run it with the same DATA_DIR (or INTERNAL_TOKEN) as the platform.'
          : err.details || err.message;
    process.stderr.write(`${JSON.stringify({ error: message })}\n`);
    closeClients();
    process.exit(1);
  });
