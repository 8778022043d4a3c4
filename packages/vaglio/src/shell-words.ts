/** One simple command read from shell text: its words and where it sends output. */
export interface SimpleCommand {
  words: string[];
  /** Targets of `>`, `>>`, `&>` and `N>` redirections. */
  redirects: string[];
}

const OPERATORS = new Set([';', '&', '|', '\n', '(', ')', '`']);
/** A run of characters with no meaning to the reader, taken in one step. */
const PLAIN_RUN = /[^\s'"\\$~<>;&|()`]+/y;

/**
 * Splits shell text into simple commands, the way a POSIX shell would read
 * the words: quotes, backslashes, `;`, `&&`, `||`, `|`, `&`, newlines,
 * subshells and command substitution. Variables expand through `expand`
 * (unquoted and inside double quotes only). Unterminated quotes run to the
 * end: the reader is tolerant because it reads untrusted text.
 *
 * @example
 * parseShell('sudo rm -rf / && echo done > log', () => '');
 * // [{ words: ['sudo', 'rm', '-rf', '/'], redirects: [] }, { words: ['echo', 'done'], redirects: ['log'] }]
 */
export function parseShell(text: string, expand: (name: string) => string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], redirects: [] };
  let word = '';
  let inWord = false;
  let redirectNext = false;

  const endWord = () => {
    if (!inWord) return;
    if (redirectNext) current.redirects.push(word);
    else current.words.push(word);
    redirectNext = false;
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
    current = { words: [], redirects: [] };
    redirectNext = false;
  };
  const variable = (index: number): { value: string; next: number } | undefined => {
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}/.exec(text.slice(index));
    if (braced) return { value: expand(braced[1]!), next: index + braced[0].length };
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(index));
    if (plain) return { value: expand(plain[1]!), next: index + plain[0].length };
    return undefined;
  };

  let index = 0;
  while (index < text.length) {
    const char = text[index]!;
    if (char === "'") {
      const close = text.indexOf("'", index + 1);
      const end = close === -1 ? text.length : close;
      word += text.slice(index + 1, end);
      inWord = true;
      index = end + 1;
      continue;
    }
    if (char === '"') {
      inWord = true;
      index++;
      while (index < text.length && text[index] !== '"') {
        const inner = text[index]!;
        if (inner === '\\' && index + 1 < text.length && '"\\$`'.includes(text[index + 1]!)) {
          word += text[index + 1];
          index += 2;
        } else if (inner === '$' && variable(index)) {
          const found = variable(index)!;
          word += found.value;
          index = found.next;
        } else {
          word += inner;
          index++;
        }
      }
      index++;
      continue;
    }
    if (char === '\\') {
      if (index + 1 < text.length && text[index + 1] !== '\n') word += text[index + 1];
      inWord = true;
      index += 2;
      continue;
    }
    if (char === '$') {
      if (text[index + 1] === '(') {
        endCommand();
        index += 2;
        continue;
      }
      const found = variable(index);
      if (found) {
        word += found.value;
        inWord = true;
        index = found.next;
        continue;
      }
    }
    if (char === '~' && !inWord) {
      const next = text[index + 1];
      if (next === undefined || next === '/' || /[\s;|&)`<>]/.test(next)) {
        word += expand('HOME');
        inWord = true;
        index++;
        continue;
      }
    }
    if (char === '>') {
      if (inWord && !/^\d+$/.test(word) && word !== '&') endWord();
      word = '';
      inWord = false;
      redirectNext = true;
      index += text[index + 1] === '>' || text[index + 1] === '|' ? 2 : 1;
      continue;
    }
    if (char === '<') {
      endWord();
      index++;
      continue;
    }
    if (OPERATORS.has(char)) {
      if (char === '&' && text[index + 1] === '>') {
        endWord();
        index++;
        continue;
      }
      endCommand();
      index++;
      continue;
    }
    if (/\s/.test(char)) {
      endWord();
      index++;
      continue;
    }
    PLAIN_RUN.lastIndex = index;
    const run = PLAIN_RUN.exec(text);
    word += run ? run[0] : char;
    inWord = true;
    index += run ? run[0].length : 1;
  }
  endCommand();
  return commands;
}
