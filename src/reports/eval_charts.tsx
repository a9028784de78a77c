/**
 * Score distribution charts drawn on the server as inline SVG: no script, no external asset, the same in a
 * self-contained report file and on the dashboard. Each chart is an image with a text alternative.
 */

import type { Bin, Distribution } from "./eval_stats.ts";

const W = 320, H = 170, LEFT = 34, RIGHT = 8, TOP = 10, BOTTOM = 34;
const BAR = "#0a58ca", AXIS = "#57606a", GRID = "#d0d7de";

const label = (n: number) => Number.isInteger(n) ? String(n) : n < 10 ? n.toFixed(1) : String(Math.round(n));

/** A histogram of `bins` as an SVG image: bars, a count axis, the bins' edges below. */
export function Histogram(props: { bins: Bin[]; title: string; unit?: string }) {
  const { bins } = props;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const plotW = W - LEFT - RIGHT, plotH = H - TOP - BOTTOM;
  const barW = plotW / Math.max(1, bins.length);
  const total = bins.reduce((n, b) => n + b.count, 0);
  const summary = `${props.title}: ${total} value(s); ` +
    bins.filter((b) => b.count > 0).map((b) => `${label(b.from)}–${label(b.to)}: ${b.count}`).join(", ");
  const edges = bins.length
    ? [bins[0].from, bins[Math.floor(bins.length / 2)].from, bins[bins.length - 1].to]
    : [];
  return (
    <figure class="chart">
      <svg
        xmlns="http://www.w3.org/2000/svg"
        viewBox={`0 0 ${W} ${H}`}
        width={W}
        height={H}
        role="img"
        aria-label={summary}
      >
        <title>{summary}</title>
        {[0, 0.5, 1].map((f) => {
          const y = TOP + plotH * (1 - f);
          return (
            <g>
              <line x1={LEFT} x2={W - RIGHT} y1={y} y2={y} stroke={GRID} stroke-width="1" />
              <text x={LEFT - 4} y={y + 4} text-anchor="end" font-size="10" fill={AXIS}>
                {label(max * f)}
              </text>
            </g>
          );
        })}
        {bins.map((b, i) => {
          const h = plotH * b.count / max;
          return (
            <rect
              x={LEFT + i * barW + 1}
              y={TOP + plotH - h}
              width={Math.max(1, barW - 2)}
              height={h}
              fill={BAR}
            >
              <title>{`${label(b.from)}–${label(b.to)}: ${b.count}`}</title>
            </rect>
          );
        })}
        {edges.map((e, i) => (
          <text
            x={LEFT + (i === 0 ? 0 : i === 1 ? Math.floor(bins.length / 2) * barW : plotW)}
            y={H - BOTTOM + 14}
            text-anchor={i === 0 ? "start" : i === 1 ? "middle" : "end"}
            font-size="10"
            fill={AXIS}
          >
            {label(e)}
          </text>
        ))}
        <text x={LEFT + plotW / 2} y={H - 6} text-anchor="middle" font-size="11" fill={AXIS}>
          {props.unit ?? "score"}
        </text>
      </svg>
      <figcaption>{props.title}</figcaption>
    </figure>
  );
}

/** The charts of every scorer's distribution: its scores, and its measured values when it has them. */
export function DistributionCharts(props: { distributions: Distribution[] }) {
  const charts = props.distributions.flatMap((d) => [
    ...(d.scores.length
      ? [<Histogram key={`${d.scorer}-scores`} bins={d.scores} title={`${d.scorer}: scores`} />]
      : []),
    ...(d.values
      ? [
        <Histogram
          key={`${d.scorer}-values`}
          bins={d.values.bins}
          title={`${d.scorer}: values`}
          unit={d.values.unit}
        />,
      ]
      : []),
  ]);
  if (charts.length === 0) return <p class="muted">No scores to chart yet.</p>;
  return <div class="charts">{charts}</div>;
}
