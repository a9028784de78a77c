/**
 * Where a JSON text stops being JSON, and why, in words a person can act on. V8's JSON.parse messages
 * give a position only for some errors (`Unexpected token '}', …"x": }…" is not valid JSON` has none), so
 * config files that must name `file:line:col` run this small scanner once JSON.parse has refused them.
 */

/** A JSON syntax error at a 1-based line and column. */
export interface JsonSyntaxError {
  message: string;
  line: number;
  column: number;
}

class Stop {
  constructor(readonly message: string, readonly at: number) {}
}

/** The first syntax error of a text JSON.parse refused (undefined if the scanner finds none). */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const found = () => (i >= text.length ? "the end of the text" : `\`${text[i]}\``);
  const fail = (what: string): never => {
    throw new Stop(`expected ${what}, found ${found()}`, i);
  };
  const string = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\n") throw new Stop('a string runs past the end of its line (a missing `"`?)', start);
      i += text[i] === "\\" ? 2 : 1;
    }
    if (i >= text.length) throw new Stop('a string is not closed (a missing `"`?)', start);
    i++;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      ws();
      if (text[i] === "}") return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(text[i] === "}" ? "a key (no comma before `}`)" : "a key in double quotes");
        string();
        ws();
        if (text[i] !== ":") fail("`:` after the key");
        i++;
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") return void i++;
        fail("`,` or `}`");
      }
    }
    if (c === "[") {
      i++;
      ws();
      if (text[i] === "]") return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") return void i++;
        fail("`,` or `]`");
      }
    }
    if (c === '"') return string();
    const word = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      text.slice(i, i + 400),
    );
    if (word) return void (i += word[0].length);
    fail("a value");
  };
  try {
    value();
    ws();
    if (i < text.length) fail("the end of the text");
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    const before = text.slice(0, err.at).split("\n");
    return { message: err.message, line: before.length, column: before[before.length - 1].length + 1 };
  }
}
