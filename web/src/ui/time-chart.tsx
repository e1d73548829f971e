/**
 * A time-series line chart (uPlot, loaded with the first chart: pages without charts never
 * download it). `x` in Unix seconds; one array of values per series, null for a gap.
 */
import { useEffect, useRef } from 'react';

export interface Series {
  label: string;
  values: Array<number | null>;
}

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563'];

export function TimeChart({ x, series, height = 220, label }: { x: number[]; series: Series[]; height?: number; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: { destroy(): void; setSize(s: { width: number; height: number }): void } | null = null;
    let cancelled = false;
    let observer: ResizeObserver | null = null;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')]).then(([{ default: UPlot }]) => {
      if (cancelled) return;
      const stroke = getComputedStyle(el).color;
      chart = new UPlot(
        {
          width: el.clientWidth || 600,
          height,
          axes: [
            { stroke, grid: { stroke: 'rgba(128,128,128,0.15)' } },
            { stroke, grid: { stroke: 'rgba(128,128,128,0.15)' } },
          ],
          series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true }))],
        },
        [x, ...series.map((s) => s.values)] as never,
        el,
      );
      observer = new ResizeObserver(() => chart?.setSize({ width: el.clientWidth, height }));
      observer.observe(el);
    });
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [x, series, height]);
  return <div ref={box} className="chart" role="img" aria-label={label} />;
}
