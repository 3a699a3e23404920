/** The scale run's report: its targets against the first step, and the chunk cache's share of W9's lookups beside the rates. */
import { describe, expect, it } from 'vitest';
import { renderScaleMarkdown, ScaleRun, ScaleStep, scaleVerdicts } from '../../../bench/report/scale-report';

function step(families: number, w9Zipf: number, hits?: { uniform: number; zipfian: number }): ScaleStep {
  return {
    families,
    entries: families * 10,
    w7PutsPerSec: 20_000,
    w1PutsPerSec: 22_000,
    w2GetsPerSec: 15_000,
    fillEntriesPerSec: 90_000,
    w8PutsPerSec: 12_000,
    w9UniformGetsPerSec: 14_000,
    w9ZipfianGetsPerSec: w9Zipf,
    ...(hits ? { w9UniformChunkHits: hits.uniform, w9ZipfianChunkHits: hits.zipfian } : {}),
    memory: [{ rssMb: 600, anonMb: 450, fileMb: 150 }],
    dataMb: [200],
    stepSeconds: 60,
    errors: 0,
  };
}

function runOf(steps: ScaleStep[]): ScaleRun {
  return {
    startedAt: '2026-11-27T17:00:00.000Z',
    machine: { cpus: 2, node: 'v20', platform: 'linux' },
    settings: { families: 500_000, steps: 2, entriesPerFamily: 10, callers: 64, phaseMs: 3000, partitions: 8, segmentStores: 1, valueBytes: 100 },
    steps,
  };
}

describe('scale report', () => {
  it('shows the chunk cache’s share of W9’s lookups per step, and — for a run without them', () => {
    const md = renderScaleMarkdown(runOf([step(250_000, 30_000, { uniform: 0.041, zipfian: 0.874 }), step(500_000, 21_000, { uniform: 0.02, zipfian: 0.7 })]), 536);
    expect(md).toContain('| chunk-cache hits, W9 uniform / zipfian |');
    expect(md).toContain('| 30,000 | 4% / 87% | 15,000 |');
    expect(md).toContain('| 21,000 | 2% / 70% | 15,000 |');
    expect(renderScaleMarkdown(runOf([step(250_000, 30_000)]), 536)).toContain('| 30,000 | — / — | 15,000 |');
  });

  it('states every target of issue 37 on the last step of three, and memory over every step', () => {
    const first = { ...step(100_000, 30_000), memory: [{ rssMb: 700, anonMb: 600, fileMb: 100 }] };
    const last = { ...step(300_000, 27_000), w9UniformGetsPerSec: 11_000 };
    expect(scaleVerdicts(runOf([first, step(200_000, 10_000), last]), 536)).toEqual([
      'W7 / W1 (new families / family-less puts), the last step: 91% ≥ 80%: met',
      'W9 uniform / W2 (family gets / family-less gets), the last step: 73% < 80%: missed',
      'W7 of the last step / the first: 100% ≥ 80%: met',
      'W9 uniform of the last step / the first: 79% < 80%: missed',
      'W9 zipfian of the last step / the first: 90% ≥ 80%: met',
      "largest anonymous RSS of a store at rest 600 MiB, bound 536 MiB: missed (file pages, LevelDB's tables mapped for reading, up to 150 MiB beside it)",
    ]);
  });

  it('meets a share of exactly 80% and a memory exactly at the bound', () => {
    const last = { ...step(500_000, 24_000), w7PutsPerSec: 17_600, memory: [{ rssMb: 700, anonMb: 536, fileMb: 164 }] };
    const verdicts = scaleVerdicts(runOf([step(250_000, 30_000), last]), 536);
    expect(verdicts).toContain('W7 / W1 (new families / family-less puts), the last step: 80% ≥ 80%: met');
    expect(verdicts).toContain('W9 zipfian of the last step / the first: 80% ≥ 80%: met');
    expect(verdicts).toContain("largest anonymous RSS of a store at rest 536 MiB, bound 536 MiB: met (file pages, LevelDB's tables mapped for reading, up to 164 MiB beside it)");
  });

  it('judges the last step against the first', () => {
    const verdicts = scaleVerdicts(runOf([step(250_000, 30_000), step(500_000, 21_000)]), 536);
    expect(verdicts).toContain('W9 zipfian of the last step / the first: 70% < 80%: missed');
    expect(verdicts).toContain("largest anonymous RSS of a store at rest 450 MiB, bound 536 MiB: met (file pages, LevelDB's tables mapped for reading, up to 150 MiB beside it)");
  });
});
