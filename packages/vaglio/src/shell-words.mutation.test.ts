import { describe, expect, it } from 'vitest';
import { parseShell } from './shell-words.ts';

const env: Record<string, string> = { HOME: '/home/ada', X: 'ex', EMPTY: '' };
const expand = (name: string) => env[name] ?? `<${name}>`;
const words = (text: string) => parseShell(text, expand).map((command) => command.words);

describe('parseShell reads words as a POSIX shell would', () => {
  it('splits on blanks of any kind and drops empty commands', () => {
    expect(parseShell('  rm   -rf\t/tmp/x  ', expand)).toEqual([
      { words: ['rm', '-rf', '/tmp/x'], redirects: [] },
    ]);
    expect(parseShell('', expand)).toEqual([]);
    expect(parseShell(' ; ; ', expand)).toEqual([]);
  });

  it('ends a command at every operator', () => {
    expect(words('a;b&c|d\ne(f)g`h`i&&j||k')).toEqual([
      ['a'],
      ['b'],
      ['c'],
      ['d'],
      ['e'],
      ['f'],
      ['g'],
      ['h'],
      ['i'],
      ['j'],
      ['k'],
    ]);
  });

  it('keeps single-quoted text literal, and an unterminated quote runs to the end', () => {
    expect(words("echo 'a b;$X \\n'")).toEqual([['echo', 'a b;$X \\n']]);
    expect(words("echo 'open; rm -rf /")).toEqual([['echo', 'open; rm -rf /']]);
    expect(words("''")).toEqual([['']]);
    expect(words("a''b")).toEqual([['ab']]);
  });

  it('expands variables and keeps escapes inside double quotes', () => {
    expect(words('echo "a $X b"')).toEqual([['echo', 'a ex b']]);
    expect(words('echo "${X}y"')).toEqual([['echo', 'exy']]);
    expect(words('echo "\\"q\\" \\\\ \\$X \\`"')).toEqual([['echo', '"q" \\ $X `']]);
    expect(words('echo "\\n"')).toEqual([['echo', '\\n']]);
    expect(words('echo "$"')).toEqual([['echo', '$']]);
    expect(words('echo "$1"')).toEqual([['echo', '$1']]);
    expect(words('echo "open')).toEqual([['echo', 'open']]);
    expect(words('echo "a"b"c"')).toEqual([['echo', 'abc']]);
    expect(words('echo "" x')).toEqual([['echo', '', 'x']]);
    expect(words('echo "a\\')).toEqual([['echo', 'a\\']]);
  });

  it('takes the next character after a backslash, and a backslash-newline joins lines', () => {
    expect(words('rm\\ -rf /')).toEqual([['rm -rf', '/']]);
    expect(words('r\\m x')).toEqual([['rm', 'x']]);
    expect(words('rm \\\n-rf')).toEqual([['rm', '-rf']]);
    expect(words('a\\;b')).toEqual([['a;b']]);
    expect(words('a\\')).toEqual([['a']]);
  });

  it('expands $NAME and ${NAME…} outside quotes, leaving other dollars as text', () => {
    expect(words('rm -rf $HOME/x')).toEqual([['rm', '-rf', '/home/ada/x']]);
    expect(words('rm -rf ${HOME}/x')).toEqual([['rm', '-rf', '/home/ada/x']]);
    expect(words('rm -rf ${HOME:-/tmp}/x')).toEqual([['rm', '-rf', '/home/ada/x']]);
    expect(words('echo $EMPTY')).toEqual([['echo', '']]);
    expect(words('echo $ $1 a$')).toEqual([['echo', '$', '$1', 'a$']]);
    expect(words('echo $X$X')).toEqual([['echo', 'exex']]);
    expect(words('echo ${1}')).toEqual([['echo', '${1}']]);
    expect(words('echo $_a1 $Ab')).toEqual([['echo', '<_a1>', '<Ab>']]);
  });

  it('reads a command substitution as its own command', () => {
    expect(words('echo $(rm -rf /)')).toEqual([['echo'], ['rm', '-rf', '/']]);
    expect(words('x=$(cat f)')).toEqual([['x='], ['cat', 'f']]);
  });

  it('expands a leading ~ only as a word of its own or before a slash or an operator', () => {
    expect(words('rm -rf ~')).toEqual([['rm', '-rf', '/home/ada']]);
    expect(words('rm -rf ~/')).toEqual([['rm', '-rf', '/home/ada/']]);
    expect(words('ls ~;ls ~|ls ~&ls ~)')).toEqual([
      ['ls', '/home/ada'],
      ['ls', '/home/ada'],
      ['ls', '/home/ada'],
      ['ls', '/home/ada'],
    ]);
    expect(words('ls ~ x')).toEqual([['ls', '/home/ada', 'x']]);
    expect(words('ls ~`x`')).toEqual([['ls', '/home/ada'], ['x']]);
    expect(words('ls ~>f')).toEqual([['ls', '/home/ada']]);
    expect(words('ls ~<f')).toEqual([['ls', '/home/ada', 'f']]);
    expect(words('ls ~root a~ x~/y')).toEqual([['ls', '~root', 'a~', 'x~/y']]);
  });

  it('collects redirection targets apart from the words', () => {
    expect(parseShell('echo hi > out.txt', expand)).toEqual([
      { words: ['echo', 'hi'], redirects: ['out.txt'] },
    ]);
    expect(parseShell('echo hi >>log', expand)).toEqual([{ words: ['echo', 'hi'], redirects: ['log'] }]);
    expect(parseShell('echo hi >|clobber', expand)).toEqual([
      { words: ['echo', 'hi'], redirects: ['clobber'] },
    ]);
    expect(parseShell('cmd 2>err', expand)).toEqual([{ words: ['cmd'], redirects: ['err'] }]);
    expect(parseShell('cmd &>all', expand)).toEqual([{ words: ['cmd'], redirects: ['all'] }]);
    expect(parseShell('cmd a>b', expand)).toEqual([{ words: ['cmd', 'a'], redirects: ['b'] }]);
    expect(parseShell('> only', expand)).toEqual([{ words: [], redirects: ['only'] }]);
    expect(parseShell('cmd > $HOME/f', expand)).toEqual([{ words: ['cmd'], redirects: ['/home/ada/f'] }]);
    expect(parseShell('a > b; c', expand)).toEqual([
      { words: ['a'], redirects: ['b'] },
      { words: ['c'], redirects: [] },
    ]);
  });

  it('reads an input redirection as the end of a word and keeps its source as a word', () => {
    expect(parseShell('sort<in', expand)).toEqual([{ words: ['sort', 'in'], redirects: [] }]);
  });

  it('a redirection pending at an operator does not leak into the next command', () => {
    expect(parseShell('a >; b', expand)).toEqual([
      { words: ['a'], redirects: [] },
      { words: ['b'], redirects: [] },
    ]);
  });

  it('reads long plain runs in one piece', () => {
    const long = 'x'.repeat(5000);
    expect(words(`echo ${long}`)).toEqual([['echo', long]]);
    expect(words('a=b,c.d/e:f@g+h')).toEqual([['a=b,c.d/e:f@g+h']]);
  });
});
