/**
 * The Prometheus text exposition format (version 0.0.4), for the few metric kinds stn keeps: counters,
 * histograms and gauges read at scrape time. Written here instead of taken from prom-client: that
 * package's dependency `bintrees` ships a 2 MB test file that overflows `deno compile`'s stack (issue 34).
 * Spec: https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

/** The content type of a page `exposition` writes. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One line of a family: `name{labels} value` (a histogram's lines add a suffix such as `_bucket`). */
export interface Sample {
  suffix?: string;
  labels: [string, string][];
  value: number;
}

/** A metric family: its name, help and type, and its samples as they are when scraped. */
export interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples(): Sample[] | Promise<Sample[]>;
}

/** What a counter or histogram is declared with. */
interface Declaration<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

type Labels<L extends string> = Record<L, string>;

/** The label pairs in declaration order, and the key of their series. */
function series<L extends string>(names: readonly L[], labels: Labels<L> | undefined): {
  pairs: [string, string][];
  key: string;
} {
  const pairs = names.map((n): [string, string] => [n, labels?.[n] ?? ""]);
  return { pairs, key: JSON.stringify(pairs.map((p) => p[1])) };
}

/** A monotonic count per label set; a counter without labels reads 0 before its first increment. */
export class Counter<L extends string = never> implements Family {
  readonly name: string;
  readonly help: string;
  readonly type = "counter" as const;
  readonly #labelNames: readonly L[];
  readonly #values = new Map<string, Sample>();

  constructor(declaration: Declaration<L>) {
    this.name = declaration.name;
    this.help = declaration.help;
    this.#labelNames = declaration.labelNames ?? [];
    if (this.#labelNames.length === 0) this.#values.set("[]", { labels: [], value: 0 });
  }

  /** Adds `by` (default 1, never negative) to the series of these labels. */
  inc(labels?: Labels<L>, by = 1): void {
    if (!(by >= 0)) throw new RangeError(`${this.name}: a counter cannot be increased by ${by}`);
    const { pairs, key } = series(this.#labelNames, labels);
    const sample = this.#values.get(key);
    if (sample) sample.value += by;
    else this.#values.set(key, { labels: pairs, value: by });
  }

  samples(): Sample[] {
    return [...this.#values.values()];
  }
}

/** Observations counted into cumulative buckets (`le`), with their sum and count, per label set. */
export class Histogram<L extends string = never> implements Family {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram" as const;
  readonly #labelNames: readonly L[];
  readonly #buckets: number[];
  readonly #series = new Map<string, { pairs: [string, string][]; counts: number[]; sum: number }>();

  constructor(declaration: Declaration<L> & { buckets: readonly number[] }) {
    this.name = declaration.name;
    this.help = declaration.help;
    this.#labelNames = declaration.labelNames ?? [];
    this.#buckets = [...declaration.buckets].sort((a, b) => a - b);
  }

  /** Records one observation in the series of these labels. */
  observe(labels: Labels<L>, value: number): void {
    const { pairs, key } = series(this.#labelNames, labels);
    let s = this.#series.get(key);
    if (!s) this.#series.set(key, s = { pairs, counts: this.#buckets.map(() => 0).concat(0), sum: 0 });
    const i = this.#buckets.findIndex((upper) => value <= upper);
    s.counts[i < 0 ? this.#buckets.length : i]++;
    s.sum += value;
  }

  samples(): Sample[] {
    const out: Sample[] = [];
    for (const { pairs, counts, sum } of this.#series.values()) {
      let cumulative = 0;
      counts.forEach((n, i) => {
        cumulative += n;
        const le = i < this.#buckets.length ? number(this.#buckets[i]) : "+Inf";
        out.push({ suffix: "_bucket", labels: [...pairs, ["le", le]], value: cumulative });
      });
      out.push({ suffix: "_sum", labels: pairs, value: sum });
      out.push({ suffix: "_count", labels: pairs, value: cumulative });
    }
    return out;
  }
}

/** A gauge whose samples are read when scraped. */
export function gauge(
  name: string,
  help: string,
  read: () => Sample[] | Promise<Sample[]>,
): Family {
  return { name, help, type: "gauge", samples: read };
}

/** A sample value as the format spells it (`+Inf`, `-Inf`, `NaN`, else the shortest decimal). */
function number(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

const escapeHelp = (s: string) => s.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
const escapeLabel = (s: string) => escapeHelp(s).replaceAll('"', '\\"');

function line(name: string, { suffix = "", labels, value }: Sample): string {
  const set = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}` : "";
  return `${name}${suffix}${set} ${number(value)}\n`;
}

/** The families as one page of the text format: `# HELP`, `# TYPE` and the samples of each, in order. */
export async function exposition(families: readonly Family[]): Promise<string> {
  const pages = await Promise.all(families.map(async (f) => {
    const samples = await f.samples();
    return `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n` +
      samples.map((s) => line(f.name, s)).join("");
  }));
  return pages.join("\n");
}
