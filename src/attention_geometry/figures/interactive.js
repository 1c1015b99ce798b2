// Figures a reader can move (attention_geometry.figures.interactive): the library's formulas,
// ported line by line so that the page recomputes what the chapter computed, and the wiring of
// sliders to a plotly.js figure. Loaded once per page, however many figures it holds.
(function () {
  "use strict";
  if (window.agMoving) return;

  // numpy.logaddexp, branch for branch (npy_logaddexp), so that -inf behaves as in the library.
  function logaddexp(x, y) {
    if (x === y) return x + Math.LN2;
    const d = x - y;
    if (d > 0) return x + Math.log1p(Math.exp(-d));
    if (d <= 0) return y + Math.log1p(Math.exp(d));
    return d; // NaN
  }

  // attention_geometry.cesaro.log_last_row: ln p_j of the last row of N^H, the O(HL) recursion
  // eq-cesaro-recursion in log space, r_j <- logaddexp(ln(1-alpha) + r_j, ln(alpha) + ln sum_{i>=j} r_i/i).
  function logLastRow(L, H, alpha) {
    const logInv = new Float64Array(L);
    for (let j = 0; j < L; j++) logInv[j] = -Math.log(j + 1);
    const logKeep = Math.log1p(-alpha), logMix = Math.log(alpha);
    const row = new Float64Array(L).fill(-Infinity), tail = new Float64Array(L);
    row[L - 1] = 0.0;
    for (let h = 0; h < H; h++) {
      let acc = row[L - 1] + logInv[L - 1]; // logaddexp.accumulate over the reversed row
      tail[L - 1] = acc;
      for (let j = L - 2; j >= 0; j--) tail[j] = acc = logaddexp(acc, row[j] + logInv[j]);
      for (let j = 0; j < L; j++) row[j] = logaddexp(logKeep + row[j], logMix + tail[j]);
    }
    return row;
  }

  // The regularised incomplete gamma functions P(r, s) (scipy's gammainc) and Q(r, s) (gammaincc)
  // for every integer order r = 1..H at one s >= 0: with t_n = e^-s s^n / n!,
  // Q(r, s) = t_0 + ... + t_{r-1} and P(r, s) = t_r + t_{r+1} + ...; sums of positive terms only,
  // so both are accurate to rounding in relative terms, however small.
  function incompleteGammas(H, s, P, Q) {
    if (s === Infinity) { P.fill(1, 1); Q.fill(0, 1); return; }
    if (s === 0) { P.fill(0, 1); Q.fill(1, 1); return; }
    const t = new Float64Array(H + 1);
    t[0] = Math.exp(-s);
    for (let n = 1; n <= H; n++) t[n] = t[n - 1] * s / n;
    let q = 0;
    for (let r = 1; r <= H; r++) { q += t[r - 1]; Q[r] = q; }
    // P(H + 1, s): the series beyond t_H, until its terms no longer change the sum
    let p = 0, term = t[H];
    for (let n = H + 1; ; n++) {
      term *= s / n;
      if (term === 0 || (n > s && term <= p * 1e-17)) { p += term; break; }
      p += term;
    }
    for (let r = H; r >= 1; r--) { p += t[r]; P[r] = p; }
  }

  // attention_geometry.cesaro.limit_cell_masses: the mass the continuous limit (eq-cesaro-rho) puts in
  // each cell ((j-1)/L, j/L]; the cells' edges have s = ln(1/x), and the mass of rho_r in a cell is a
  // difference of P (where P < 1/2 at its left edge) or of Q (elsewhere), as in the library; the Dirac
  // mass (1-alpha)^H goes into the last cell.
  function limitCellMasses(L, H, alpha) {
    const w = new Float64Array(H + 1); // w_r = C(H, r) alpha^r (1-alpha)^(H-r)
    let comb = 1;
    for (let r = 1; r <= H; r++) {
      comb = comb * (H - r + 1) / r;
      w[r] = comb * Math.pow(alpha, r) * Math.pow(1 - alpha, H - r);
    }
    let P = new Float64Array(H + 1), Q = new Float64Array(H + 1);
    let P0 = new Float64Array(H + 1), Q0 = new Float64Array(H + 1); // at the cell's left edge
    incompleteGammas(H, -Math.log(0 / L), P0, Q0);
    const out = new Float64Array(L);
    for (let k = 1; k <= L; k++) { // cell j = k: ((k-1)/L, k/L]
      incompleteGammas(H, -Math.log(k / L), P, Q);
      let m = 0;
      for (let r = 1; r <= H; r++) {
        const mass = P0[r] < 0.5 ? P0[r] - P[r] : Q[r] - Q0[r];
        m += w[r] * Math.max(mass, 0.0);
      }
      out[k - 1] = m;
      [P0, P, Q0, Q] = [P, P0, Q, Q0];
    }
    out[L - 1] += Math.pow(1 - alpha, H);
    return out;
  }

  const BLUE = "#0173b2", ORANGE = "#de8f05"; // the book's palette (seaborn "colorblind")
  const MAX_POINTS = 2048; // plotted per curve; the computed arrays keep every position

  function shown(L) { // the positions drawn: all of them up to MAX_POINTS, else every k-th (and j = L-1)
    const stride = Math.max(1, Math.ceil((L - 1) / MAX_POINTS)), idx = [];
    for (let j = 0; j < L - 1; j += stride) idx.push(j);
    if (idx[idx.length - 1] !== L - 2) idx.push(L - 2);
    return idx;
  }

  function log10(v) { return v > 0 ? Math.log10(v) : null; } // null: a gap in the curve

  function drawCesaro(el, result) {
    const { L, H, alpha, logProfile, cellMasses } = result;
    const idx = shown(L), x = idx.map(j => (j + 1) / L);
    const exact = idx.map(j => Number.isFinite(logProfile[j]) ? logProfile[j] / Math.LN10 : null);
    const limit = idx.map(j => log10(cellMasses[j]));
    const last = Number.isFinite(logProfile[L - 1]) ? logProfile[L - 1] / Math.LN10 : null;
    const traces = [
      { x: x, y: exact, mode: "lines", name: "exact p<sub>j</sub> (recursion, O(HL))", line: { color: BLUE, width: 2 } },
      { x: [1], y: [last], mode: "markers", name: "last token p<sub>L</sub>", marker: { color: BLUE, size: 9 } },
      { x: x, y: limit, mode: "lines", name: "continuous limit (cell mass)",
        line: { color: ORANGE, width: 2, dash: "dot" } },
    ];
    const layout = {
      title: { text: `Last row of N<sup>H</sup>: L = ${L}, H = ${H}, α = ${alpha.toFixed(2)}`, font: { size: 15 } },
      xaxis: { title: { text: "position x = j/L" }, range: [0, 1.02] },
      yaxis: { title: { text: "log<sub>10</sub> p<sub>j</sub>" } },
      legend: { x: 0.01, xanchor: "left", y: 0.01, yanchor: "bottom" }, // the profile falls: free there
      autosize: true, margin: { l: 60, r: 20, t: 50, b: 50 }, paper_bgcolor: "white", plot_bgcolor: "white",
    };
    window.Plotly.react(el.querySelector(".ag-plot"), traces, layout,
                        { displaylogo: false, responsive: true });
    const mid = Math.ceil(L / 2) - 1, fmt = v => Math.exp(v).toExponential(2);
    el.querySelector(".ag-readout").innerHTML = // numbers only: nothing from outside the page
      `First token p<sub>1</sub> = ${fmt(logProfile[0])}, middle p<sub>${mid + 1}</sub> = ` +
      `${fmt(logProfile[mid])}, last token p<sub>L</sub> = ${fmt(logProfile[L - 1])}; the limit's mass in ` +
      `the last cell, its point mass (1−α)<sup>H</sup> included: ${cellMasses[L - 1].toExponential(2)}.`;
  }

  // Chapter 6: the stored recency probabilities of the (d, alpha) grid, read at the sliders'
  // point; data.rp[g][l][a][k], data.se likewise (gamma g, layer l, alpha a, width k).
  function readRecency(v, data) {
    const a = data.alphas.indexOf(v.alpha), k = data.dims.indexOf(v.d);
    const pick = t => t.map(byLayer => byLayer.map(row => row[a][k]));
    return { alpha: v.alpha, d: v.d, layers: data.layers, gammas: data.gammas, rp: pick(data.rp), se: pick(data.se),
             range: recencyRange(data) };
  }

  function recencyRange(data) { // one y-axis for the whole grid, so that moving the sliders compares points
    const se = data.se.flat(3);
    let lo = 0.5, hi = 0.5;
    data.rp.flat(3).forEach((r, i) => { lo = Math.min(lo, r - 2 * se[i]); hi = Math.max(hi, r + 2 * se[i]); });
    const pad = 0.05 * (hi - lo || 1);
    return [lo - pad, hi + pad];
  }

  function drawRecency(el, result) {
    const { alpha, d, layers, gammas, rp, se, range } = result, colours = [BLUE, ORANGE];
    const traces = gammas.map((g, i) => ({
      x: layers, y: rp[i], mode: "lines+markers", name: `ω = ${g} (residual ${g ? "on" : "off"})`,
      error_y: { type: "data", array: se[i].map(s => 2 * s), visible: true }, line: { color: colours[i % 2] },
    }));
    const layout = {
      title: { text: `Recency probability over depth: d = ${d}, c = ${alpha}`, font: { size: 15 } },
      xaxis: { title: { text: "layer" }, tickvals: layers },
      yaxis: { title: { text: "RP (0.5: no preference; bars ±2 SE)" }, range: range },
      shapes: [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: 0.5, y1: 0.5,
                 line: { color: "black", width: 1, dash: "dot" } }],
      autosize: true, margin: { l: 60, r: 20, t: 50, b: 50 }, paper_bgcolor: "white", plot_bgcolor: "white",
    };
    window.Plotly.react(el.querySelector(".ag-plot"), traces, layout, { displaylogo: false, responsive: true });
    el.querySelector(".ag-readout").textContent = gammas.map((g, i) =>
      `ω = ${g}: last layer RP = ${rp[i][rp[i].length - 1].toFixed(4)} ± ${se[i][se[i].length - 1].toFixed(4)}`
    ).join("; ") + ".";
  }

  // The figure kinds: what each computes from the slider values (and the figure's data), and how it
  // draws the result.
  const kinds = {
    "cesaro-profile": {
      compute: v => ({ L: v.L, H: v.H, alpha: v.alpha, logProfile: logLastRow(v.L, v.H, v.alpha),
                       cellMasses: limitCellMasses(v.L, v.H, v.alpha) }),
      draw: drawCesaro,
      cost: v => v.L * v.H,
    },
    "recency-rp": { compute: readRecency, draw: drawRecency, cost: () => 0 },
  };

  function values(el, spec) {
    const v = {};
    for (const s of spec.sliders) {
      const input = el.querySelector(`input[name="${s.name}"]`);
      v[s.name] = s.values ? s.values[Number(input.value)] : Number(input.value);
      el.querySelector(`output[name="${s.name}"]`).textContent =
        s.digits === undefined ? String(v[s.name]) : v[s.name].toFixed(s.digits);
    }
    return v;
  }

  // Wire one figure: every slider move recomputes (once per animation frame; past `liveCost`
  // operations only when the slider is released), then draws; the last result stays on the
  // element as `agResult` (the browser test reads it).
  function mount(el, spec) {
    const kind = kinds[spec.kind];
    let pending = false;
    function update() {
      pending = false;
      const v = values(el, spec);
      el.agResult = kind.compute(v, spec.data);
      if (window.Plotly) kind.draw(el, el.agResult);
      el.dataset.state = "drawn";
    }
    function schedule(event) {
      const v = values(el, spec);
      if (event && event.type === "input" && kind.cost(v) > spec.liveCost) return; // wait for "change"
      if (!pending) { pending = true; window.requestAnimationFrame(update); }
    }
    el.querySelectorAll("input").forEach(i => {
      i.addEventListener("input", schedule);
      i.addEventListener("change", schedule);
    });
    if (!window.Plotly) {
      el.querySelector(".ag-plot").textContent = "plotly.js is not loaded on this page: the figure moves in " +
        "the HTML book and in a run report (the numbers below still follow the sliders).";
    }
    update();
  }

  function start(id) {
    const el = document.getElementById(id);
    if (el && !el.agResult) mount(el, JSON.parse(el.dataset.spec));
  }

  window.agMoving = {
    logaddexp: logaddexp, logLastRow: logLastRow, incompleteGammas: incompleteGammas,
    limitCellMasses: limitCellMasses, kinds: kinds,
    // Start figure `id` once plotly.js is there: the book loads it deferred, so wait for the
    // document to be parsed (deferred scripts run before DOMContentLoaded).
    start: function (id) {
      if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => start(id));
      else start(id);
    },
  };
})();
