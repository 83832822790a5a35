// The price chart: trade prices (YES cents) over time, drawn by lightweight-charts, from the
// market's recent trades and then each trade of the `trades:` channel.
import {
  createChart,
  LineSeries,
  type IChartApi,
  type ISeriesApi,
  type UTCTimestamp,
} from 'lightweight-charts';
import type { Trade } from '../types.js';

export class PriceChart {
  private readonly chart: IChartApi;
  private readonly series: ISeriesApi<'Line'>;
  private last = 0;

  constructor(el: HTMLElement) {
    this.chart = createChart(el, {
      autoSize: true,
      layout: {
        background: { color: 'transparent' },
        textColor: '#475569',
        attributionLogo: false,
      },
      grid: { vertLines: { color: '#e2e8f0' }, horzLines: { color: '#e2e8f0' } },
      timeScale: { timeVisible: true, secondsVisible: true },
      rightPriceScale: { scaleMargins: { top: 0.15, bottom: 0.15 } },
    });
    this.series = this.chart.addSeries(LineSeries, {
      color: '#0f766e',
      lineWidth: 2,
      priceFormat: { type: 'price', precision: 0, minMove: 1 },
    });
  }

  /** Newest-first trades, as the API lists them. */
  setTrades(trades: Trade[]): void {
    const points = new Map<number, number>();
    for (const t of [...trades].reverse()) points.set(seconds(t.created_at), t.price);
    const data = [...points.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([time, value]) => ({ time: time as UTCTimestamp, value }));
    this.series.setData(data);
    this.last = data.length > 0 ? data[data.length - 1].time : 0;
    this.chart.timeScale().fitContent();
  }

  add(trade: Trade): void {
    // The chart takes points in time order only; a late one joins the latest second.
    const time = Math.max(seconds(trade.created_at), this.last);
    this.series.update({ time: time as UTCTimestamp, value: trade.price });
    this.last = time;
  }

  remove(): void {
    this.chart.remove();
  }
}

function seconds(iso: string): number {
  return Math.floor(new Date(iso).getTime() / 1000);
}
