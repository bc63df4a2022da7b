// Owns how a command line that does not parse is reported: commander's own
// errors (unknown command or option, a missing option, argument or value, too
// many arguments, conflicting options, a value its parser refuses) become
// UsageErrors in the project's style, one line naming the command with the
// fix on the same line, exit 2. The fix is built from the commands'
// definitions (an option's or argument's description, the list of commands),
// so a command or option added later reports the same way without any code here.

import { type Argument, type Command, CommanderError, type Option } from 'commander';
import { FactoryError } from '../core/errors.js';

/** A command line that does not parse: a usage problem (exit 2) said of one command. */
export class UsageError extends FactoryError {
  /** The command the problem is with, e.g. "episode-factory export sft". */
  readonly command: string;

  constructor(command: string, message: string, fix: string) {
    super('usage', message, { fix });
    this.name = 'UsageError';
    this.command = command;
  }
}

/** Help and version asked for: not errors, and left to commander (exit 0). */
export function isHelpOrVersion(error: CommanderError): boolean {
  return error.exitCode === 0 && ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code);
}

/**
 * Makes every command in the tree under `program` report its parse errors as UsageErrors (thrown out of parse, for
 * the caller to print) and silences commander's own error text. Call it after every command is registered: each
 * command gets its own handler, so the error names the command that could not parse its part of the line.
 */
export function reportUsageErrorsInProjectStyle(program: Command): void {
  for (const command of commandTree(program)) {
    // commander writes to writeErr only its error lines and the help it dumps when a subcommand is missing; both
    // are said here instead, as one line.
    command.configureOutput({ writeErr: () => undefined, outputError: () => undefined });
    command.exitOverride((error) => {
      throw usageError(command, error);
    });
  }
}

function commandTree(command: Command): Command[] {
  return [command, ...command.commands.flatMap(commandTree)];
}

/** "episode-factory export sft": the words that name `command` on the command line. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let current: Command | null = command; current; current = current.parent) names.unshift(current.name());
  return names.join(' ');
}

/** Text the user typed, safe for one terminal line: as it is when plain, JSON-quoted when it holds spaces or control characters. */
function typed(text: string): string {
  return /^[\x21-\x7e]+$/.test(text) ? text : JSON.stringify(text);
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function quoted(value: string): string {
  return JSON.stringify(value);
}

/** " (the JSONL file to write)": the definition's description, for a fix. */
function described(description: string | undefined): string {
  const text = description?.trim();
  return text ? ` (${text})` : '';
}

/** "<lane>", "<dirs...>", "[name]": an argument as its command's usage line writes it. */
function argumentUsage(argument: Argument): string {
  const name = argument.name() + (argument.variadic ? '...' : '');
  return argument.required ? `<${name}>` : `[${name}]`;
}

/** commander's "(Did you mean --seeds?)", as "--seeds" (or "--seeds, --shard"). */
function suggestionIn(message: string): string | undefined {
  return /\(Did you mean (?:one of )?(.+?)\?\)/.exec(message)?.[1];
}

function findOption(command: Command, flags: string): Option | undefined {
  return command.options.find((option) => option.flags === flags);
}

/** The names a user can type after `command`: its visible subcommands, without the implicit `help`. */
function subcommandNames(command: Command): string[] {
  return command
    .createHelp()
    .visibleCommands(command)
    .map((subcommand) => subcommand.name())
    .filter((name) => name !== 'help');
}

/** The UsageError for a commander error raised while `command` parsed its part of the line; help and version pass through. */
export function usageError(command: Command, error: CommanderError): Error {
  if (isHelpOrVersion(error)) return error;
  const where = commandPath(command);
  const help = `see \`${where} --help\``;
  const fail = (message: string, fix: string) => new UsageError(where, message, fix);
  const text = error.message.replace(/^error: /, '');
  const firstLine = text.split('\n')[0]!;
  const suggestion = suggestionIn(error.message);

  switch (error.code) {
    case 'commander.help': {
      // Help shown because the line stopped at a command that needs a subcommand (or `help` named an unknown one).
      const names = subcommandNames(command);
      if (command.args[0] === 'help' && command.args[1] !== undefined) {
        return fail(`unknown command ${quoted(command.args[1])}`, `name one of ${names.join(', ')}; ${help}`);
      }
      return fail('no command given', `name one of ${names.join(', ')}; ${help}`);
    }

    case 'commander.unknownCommand': {
      const names = subcommandNames(command);
      const list = `the commands are ${names.join(', ')}; ${help}`;
      return fail(`unknown command ${quoted(command.args[0] ?? '')}`, suggestion ? `did you mean ${suggestion}? ${capitalized(list)}` : list);
    }

    case 'commander.unknownOption': {
      const flag = /^unknown option '(.*)'$/.exec(firstLine)?.[1] ?? firstLine;
      return fail(`unknown option ${typed(flag)}`, suggestion ? `did you mean ${suggestion}? ${capitalized(help)}` : `${help} for the options it takes`);
    }

    case 'commander.missingMandatoryOptionValue': {
      const flags = /^required option '(.*)' not specified$/.exec(firstLine)?.[1];
      if (flags === undefined) break;
      return fail(`required option ${flags} is missing`, `pass ${flags}${described(findOption(command, flags)?.description)}; ${help}`);
    }

    case 'commander.optionMissingArgument': {
      const flags = /^option '(.*)' argument missing$/.exec(firstLine)?.[1];
      if (flags === undefined) break;
      const option = findOption(command, flags);
      const name = option?.long ?? option?.short ?? flags;
      return fail(`option ${name} is missing its value`, `pass ${flags}${described(option?.description)}; ${help}`);
    }

    case 'commander.missingArgument': {
      // commander reports the first required argument with nothing in its place.
      const argument =
        command.registeredArguments.find((candidate, index) => candidate.required && command.args[index] == null) ??
        command.registeredArguments.find((candidate) => candidate.name() === /'(.*)'/.exec(firstLine)?.[1]);
      if (argument === undefined) break;
      const usage = argumentUsage(argument);
      return fail(`required argument ${usage} is missing`, `pass ${usage}${described(argument.description)}; ${help}`);
    }

    case 'commander.excessArguments': {
      const expected = command.registeredArguments;
      const extra = command.args.slice(expected.length);
      const name = where.split(' ').slice(1).join(' ') || where;
      const takes = expected.length === 0 ? 'takes no arguments' : `takes ${expected.map(argumentUsage).join(' ')}`;
      const them = extra.length === 1 ? 'it' : 'them';
      const spaces = expected.length === 0 ? '' : ', or quote a value that contains spaces';
      return fail(
        `unexpected argument${extra.length === 1 ? '' : 's'} ${extra.map(quoted).join(' ')} (${name} ${takes})`,
        `remove ${them}${spaces}; ${help}`,
      );
    }

    case 'commander.conflictingOption': {
      const match = /^(?:option|environment variable) '(.*)' cannot be used with (?:option|environment variable) '(.*)'$/.exec(firstLine);
      if (!match) break;
      const [first, second] = [match[1]!, match[2]!].map((flags) => {
        const option = findOption(command, flags);
        return option ? (option.long ?? option.short ?? flags) : `environment variable ${flags}`;
      });
      return fail(`${first} cannot be used with ${second}`, `pass only one of them; ${help}`);
    }

    case 'commander.invalidArgument':
      return invalidValue(command, text, fail, help) ?? fail(firstLine, help);
  }
  // A code or wording this module does not know (a later commander, or command.error() from a command): commander's
  // own words, still one line in the project's style.
  return fail(text.replace(/\n+/g, ' '), help);
}

/** A value an option's or argument's parser (its choices, or an argParser) refused. */
function invalidValue(command: Command, text: string, fail: (message: string, fix: string) => UsageError, help: string): UsageError | undefined {
  const detailOf = (rest: string | undefined) => (rest ?? '').trim().replace(/\.$/, '');
  const option = /^option '(.*)' argument '([\s\S]*)' is invalid\.(?: ([\s\S]*))?$/.exec(text);
  const fromEnvironment = /^option '(.*)' value '([\s\S]*)' from env '(.*)' is invalid\.(?: ([\s\S]*))?$/.exec(text);
  const argument = /^command-argument value '([\s\S]*)' is invalid for argument '(.*)'\.(?: ([\s\S]*))?$/.exec(text);
  let subject: string;
  let definition: Option | Argument | undefined;
  let detail: string;
  let usage: string;
  if (option) {
    definition = findOption(command, option[1]!);
    subject = `${definition?.long ?? option[1]!} ${quoted(option[2]!)}`;
    detail = detailOf(option[3]);
    usage = option[1]!;
  } else if (fromEnvironment) {
    definition = findOption(command, fromEnvironment[1]!);
    subject = `${fromEnvironment[3]!}=${quoted(fromEnvironment[2]!)} (for ${definition?.long ?? fromEnvironment[1]!})`;
    detail = detailOf(fromEnvironment[4]);
    usage = fromEnvironment[1]!;
  } else if (argument) {
    definition = command.registeredArguments.find((candidate) => candidate.name() === argument[2]);
    usage = definition ? argumentUsage(definition) : `<${argument[2]!}>`;
    subject = `${usage} ${quoted(argument[1]!)}`;
    detail = detailOf(argument[3]);
  } else {
    return undefined;
  }
  const choices = definition?.argChoices;
  if (choices && choices.length > 0) {
    return fail(`${subject} is not one of ${choices.join(', ')}`, `use one of ${choices.join(', ')} for ${usage}${described(definition?.description)}; ${help}`);
  }
  return fail(`${subject} is invalid${detail ? `: ${detail}` : ''}`, `pass ${usage}${described(definition?.description)}; ${help}`);
}
