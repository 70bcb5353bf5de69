import { ConfigError, loadConfig, type Config, type LoadOptions } from './config.js';

/** Exit code of a command called the wrong way (as shells and getopt use it); a bad setting exits 1. */
const USAGE_EXIT_CODE = 2;

/** Prints why the command line is refused, then the usage, to stderr, and exits 2. */
export function refuseCommandLine(problem: string, usage: string): never {
  process.stderr.write(`${problem}\n\n${usage}`);
  process.exit(USAGE_EXIT_CODE);
}

/**
 * The positional arguments of an operator command (at most `maxPositionals`). `--help` or `-h` prints the usage
 * to stdout and exits 0 before anything is done; any other option, or one argument too many, is refused. After
 * `--` every argument is positional (a subject may start with a dash).
 */
export function parseCommandLine(args: readonly string[], usage: string, maxPositionals: number): string[] {
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  if (options.includes('--help') || options.includes('-h')) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const unknown = options.find((arg) => arg.startsWith('-') && arg !== '-');
  if (unknown !== undefined) refuseCommandLine(`Unknown option '${unknown}'.`, usage);
  const positionals = end === -1 ? [...args] : [...options, ...args.slice(end + 1)];
  const extra = positionals[maxPositionals];
  if (extra !== undefined) refuseCommandLine(`Unexpected argument '${extra}'.`, usage);
  return positionals;
}

/**
 * An operator command's options as `parse` (node:util's parseArgs) reads them: `--help` or `-h` prints the usage to
 * stdout and exits 0; what parseArgs refuses (an unknown option, a value missing) is refused with its reason, without
 * its hint about positionals, which only confuses an operator.
 */
export function parseOptions<Parsed extends { values: { help?: boolean } }>(
  parse: () => Parsed,
  usage: string,
): Parsed {
  let parsed: Parsed;
  try {
    parsed = parse();
  } catch (error) {
    refuseCommandLine((error as Error).message.replace(/\. To specify a positional.*$/s, '.'), usage);
  }
  if (parsed.values.help) {
    process.stdout.write(usage);
    process.exit(0);
  }
  return parsed;
}

/** The configuration, or exit 1 with the ConfigError's message on stderr (no stack: the message says it all). */
export function loadConfigOrExit(options?: LoadOptions): Config {
  try {
    return loadConfig(process.env, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
