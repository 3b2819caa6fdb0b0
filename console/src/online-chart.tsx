import type { OnlineScoreSummary } from "@kiln/sdk";

type Bucket = OnlineScoreSummary["buckets"][number];

/** One line of the chart: a version at a label. */
interface Series {
  key: string;
  name: string;
  points: Bucket[];
}

const W = 640;
const H = 220;
const PAD = { left: 40, right: 12, top: 12, bottom: 28 };
const COLOURS = ["#1f6feb", "#b35900", "#1a7f37", "#8250df", "#cf222e", "#0a7f8f"];

/** Version ids by their names ("Greeter v3"), where known. */
export type VersionNames = ReadonlyMap<string, string>;

/**
 * How a version at a label is named: its prompt's (skill's, agent's) name and number where known,
 * else the end of its version id; then its label (or "no label").
 */
export const seriesName = (b: Pick<Bucket, "versionId" | "label">, names: VersionNames) =>
  `${b.versionId ? (names.get(b.versionId) ?? `…${b.versionId.slice(-6)}`) : "no version"} · ${b.label ?? "no label"}`;

function seriesOf(buckets: Bucket[], names: VersionNames): Series[] {
  const byKey = new Map<string, Series>();
  for (const b of buckets) {
    const key = `${b.versionId}\n${b.label}`;
    const s = byKey.get(key) ?? { key, name: seriesName(b, names), points: [] };
    s.points.push(b);
    byKey.set(key, s);
  }
  return [...byKey.values()];
}

/**
 * Pass rate (solid) and mean judge score (dashed) over time, one colour per version and label:
 * plain SVG, 0 to 100% upwards, buckets left to right. Its figures are in the table beside it.
 */
export function ScoreChart({ summary, names }: { summary: OnlineScoreSummary; names: VersionNames }) {
  const starts = [...new Set(summary.buckets.map((b) => b.start))].sort();
  const x = (start: string) => {
    const i = starts.indexOf(start);
    const span = W - PAD.left - PAD.right;
    return PAD.left + (starts.length === 1 ? span / 2 : (span * i) / (starts.length - 1));
  };
  const y = (v: number) => PAD.top + (1 - v) * (H - PAD.top - PAD.bottom);
  const series = seriesOf(summary.buckets, names);
  const line = (points: Bucket[], value: (b: Bucket) => number | null) =>
    points
      .filter((p) => value(p) !== null)
      .map((p, i) => `${i === 0 ? "M" : "L"}${x(p.start).toFixed(1)},${y(value(p) as number).toFixed(1)}`)
      .join(" ");
  return (
    <figure className="score-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="score-chart-title">
        <title id="score-chart-title">Pass rate and mean judge score per {summary.bucket}, by version and label</title>
        {[0, 0.5, 1].map((v) => (
          <g key={v}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} className="grid" />
            <text x={PAD.left - 6} y={y(v) + 4} textAnchor="end">
              {v * 100}%
            </text>
          </g>
        ))}
        {[starts[0], starts.at(-1)]
          .filter((s, i, all) => s && all.indexOf(s) === i)
          .map((s) => (
            <text key={s} x={x(s as string)} y={H - 8} textAnchor="middle">
              {new Date(s as string).toLocaleString(undefined, {
                month: "short",
                day: "numeric",
                hour: summary.bucket === "hour" ? "2-digit" : undefined,
              })}
            </text>
          ))}
        {series.map((s, i) => {
          const colour = COLOURS[i % COLOURS.length];
          return (
            <g key={s.key}>
              <path d={line(s.points, (b) => b.passRate)} stroke={colour} fill="none" strokeWidth={2} />
              <path
                d={line(s.points, (b) => b.meanScore)}
                stroke={colour}
                fill="none"
                strokeWidth={2}
                strokeDasharray="5 4"
              />
              {s.points.map((p) => (
                <circle key={p.start} cx={x(p.start)} cy={y(p.passRate)} r={3} fill={colour} />
              ))}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend">
          {series.map((s, i) => (
            <li key={s.key}>
              <span className="swatch" style={{ background: COLOURS[i % COLOURS.length] }} aria-hidden="true" />
              {s.name}
            </li>
          ))}
          <li>solid: pass rate · dashed: mean judge score</li>
        </ul>
      </figcaption>
    </figure>
  );
}
