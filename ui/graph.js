// A small deterministic force layout drawn as SVG (no library): rings by depth, then a bounded
// number of repulsion/spring steps. Nodes are clickable; predicates label the edges.
(function () {
  "use strict";
  const SVGNS = "http://www.w3.org/2000/svg";
  const KIND_COLOURS = { person: "#d6457a", place: "#0f9d74", org: "#2f6fde", stock: "#d9822b",
    concept: "#7b61ff", canonical_fact: "#667085" };

  function layout(nodes, edges, width, height, rootId) {
    // Positions live in typed arrays indexed by node number: this runs 300 steps over up to 500 nodes.
    const n = nodes.length, cx = width / 2, cy = height / 2;
    const index = {};
    nodes.forEach((node, i) => { index[node.id] = i; });
    const X = new Float64Array(n), Y = new Float64Array(n), DX = new Float64Array(n), DY = new Float64Array(n);
    const byDepth = {};
    nodes.forEach((node, i) => { (byDepth[node.depth] = byDepth[node.depth] || []).push(i); });
    Object.keys(byDepth).forEach(d => {
      const ring = byDepth[d], r = Number(d) * Math.min(width, height) * 0.2;
      ring.forEach((i, j) => {
        const a = (2 * Math.PI * j) / ring.length + Number(d) * 0.6;
        X[i] = cx + r * Math.cos(a); Y[i] = cy + r * Math.sin(a);
      });
    });
    const links = edges.filter(e => e.s in index && e.o in index).map(e => [index[e.s], index[e.o]]);
    const rootIx = rootId in index ? index[rootId] : -1;
    const k = Math.sqrt((width * height) / Math.max(1, n)) * 0.55, k2 = k * k, pull = 0.002 * k;
    let temp = width / 8;
    for (let step = 0; step < 300; step++) {  // bounded: 300 steps
      DX.fill(0); DY.fill(0);
      for (let i = 0; i < n; i++) {
        for (let j = i + 1; j < n; j++) {
          let dx = X[i] - X[j], dy = Y[i] - Y[j];
          const d2 = dx * dx + dy * dy || 0.0001;
          const f = k2 / d2;  // (k²/d) along the unit vector = k²/d² times the offset
          dx *= f; dy *= f;
          DX[i] += dx; DY[i] += dy; DX[j] -= dx; DY[j] -= dy;
        }
      }
      for (const [a, b] of links) {
        const dx = X[a] - X[b], dy = Y[a] - Y[b];
        const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
        const f = d / k;  // (d²/k) along the unit vector
        DX[a] -= dx * f; DY[a] -= dy * f; DX[b] += dx * f; DY[b] += dy * f;
      }
      for (let i = 0; i < n; i++) {
        // a weak pull to the centre keeps disconnected parts on screen
        const ddx = DX[i] + (cx - X[i]) * pull, ddy = DY[i] + (cy - Y[i]) * pull;
        const len = Math.sqrt(ddx * ddx + ddy * ddy) || 0.01, m = Math.min(len, temp) / len;
        X[i] = Math.max(40, Math.min(width - 40, X[i] + ddx * m));
        Y[i] = Math.max(24, Math.min(height - 24, Y[i] + ddy * m));
      }
      if (rootIx >= 0) { X[rootIx] = cx; Y[rootIx] = cy; }
      temp = Math.max(1, temp * 0.985);
    }
    const pos = {};
    nodes.forEach((node, i) => { pos[node.id] = { x: X[i], y: Y[i] }; });
    return pos;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(SVGNS, name);
    Object.keys(attrs || {}).forEach(k => e.setAttribute(k, attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // data: {root, nodes:[{id,name,kind,depth}], edges:[{relation_id, subject, predicate, object}]}
  // Edge ends are names in graph_query's result; map them back to node ids by name.
  function render(svg, data, onClick) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    const box = svg.getBoundingClientRect();
    const width = Math.max(300, box.width || 900), height = Math.max(300, box.height || 560);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const idByName = {};
    data.nodes.forEach(n => { if (!(n.name in idByName)) idByName[n.name] = n.id; });
    const edges = data.edges.map(e => ({ s: idByName[e.subject], o: idByName[e.object], p: e.predicate,
      closed: !!e.valid_until }));
    const pos = layout(data.nodes, edges, width, height, data.root && data.root.id);
    const defs = el("defs");
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "20", refY: "5", markerWidth: "7",
      markerHeight: "7", orient: "auto-start-reverse" });
    marker.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#98a2b3" }));
    defs.appendChild(marker);
    svg.appendChild(defs);
    const gEdges = el("g"), gNodes = el("g");
    svg.appendChild(gEdges); svg.appendChild(gNodes);
    edges.forEach(e => {
      const a = pos[e.s], b = pos[e.o];
      if (!a || !b) return;
      const g = el("g", { class: "edge" });
      g.appendChild(el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "marker-end": "url(#arrow)",
        "stroke-dasharray": e.closed ? "4 3" : "" }));
      g.appendChild(el("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 3, "text-anchor": "middle" }, e.p));
      gEdges.appendChild(g);
    });
    data.nodes.forEach(n => {
      const p = pos[n.id];
      const isRoot = data.root && n.id === data.root.id;
      const g = el("g", { class: "node" + (isRoot ? " root" : ""), "data-name": n.name, "data-id": n.id,
        tabindex: "0", role: "button" });
      g.appendChild(el("circle", { cx: p.x, cy: p.y, r: isRoot ? 11 : 8, fill: KIND_COLOURS[n.kind] || "#7b61ff" }));
      g.appendChild(el("text", { x: p.x + 12, y: p.y + 4 }, n.name));
      g.appendChild(el("title", {}, `${n.name} (${n.kind})`));
      g.addEventListener("click", () => onClick(n));
      g.addEventListener("keydown", ev => { if (ev.key === "Enter") onClick(n); });
      gNodes.appendChild(g);
    });
  }

  window.MemlaneGraph = { layout, render, KIND_COLOURS };
})();
