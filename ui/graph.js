// A small deterministic force layout drawn as SVG (no library): rings by depth, then a bounded
// number of repulsion/spring steps. Nodes are clickable; predicates label the edges.
(function () {
  "use strict";
  const SVGNS = "http://www.w3.org/2000/svg";
  const KIND_COLOURS = { person: "#d6457a", place: "#0f9d74", org: "#2f6fde", stock: "#d9822b",
    concept: "#7b61ff", canonical_fact: "#667085" };

  function layout(nodes, edges, width, height, rootId) {
    const cx = width / 2, cy = height / 2;
    const byDepth = {};
    nodes.forEach(n => { (byDepth[n.depth] = byDepth[n.depth] || []).push(n); });
    const pos = {};
    Object.keys(byDepth).forEach(d => {
      const ring = byDepth[d], r = Number(d) * Math.min(width, height) * 0.2;
      ring.forEach((n, i) => {
        const a = (2 * Math.PI * i) / ring.length + Number(d) * 0.6;
        pos[n.id] = { x: cx + r * Math.cos(a), y: cy + r * Math.sin(a) };
      });
    });
    const ids = nodes.map(n => n.id);
    const links = edges.filter(e => pos[e.s] && pos[e.o]);
    const k = Math.sqrt((width * height) / Math.max(1, nodes.length)) * 0.55;
    let temp = width / 8;
    for (let step = 0; step < 300; step++) {  // bounded: 300 steps over ≤ 500 nodes
      const disp = {};
      ids.forEach(id => { disp[id] = { x: 0, y: 0 }; });
      for (let i = 0; i < ids.length; i++) {
        for (let j = i + 1; j < ids.length; j++) {
          const a = pos[ids[i]], b = pos[ids[j]];
          let dx = a.x - b.x, dy = a.y - b.y;
          let d = Math.sqrt(dx * dx + dy * dy) || 0.01;
          const f = (k * k) / d;
          dx = (dx / d) * f; dy = (dy / d) * f;
          disp[ids[i]].x += dx; disp[ids[i]].y += dy;
          disp[ids[j]].x -= dx; disp[ids[j]].y -= dy;
        }
      }
      links.forEach(e => {
        const a = pos[e.s], b = pos[e.o];
        let dx = a.x - b.x, dy = a.y - b.y;
        const d = Math.sqrt(dx * dx + dy * dy) || 0.01;
        const f = (d * d) / k;
        dx = (dx / d) * f; dy = (dy / d) * f;
        disp[e.s].x -= dx; disp[e.s].y -= dy;
        disp[e.o].x += dx; disp[e.o].y += dy;
      });
      ids.forEach(id => {
        const p = pos[id], dd = disp[id];
        // a weak pull to the centre keeps disconnected parts on screen
        dd.x += (cx - p.x) * 0.02 * k / 10; dd.y += (cy - p.y) * 0.02 * k / 10;
        const len = Math.sqrt(dd.x * dd.x + dd.y * dd.y) || 0.01;
        p.x += (dd.x / len) * Math.min(len, temp);
        p.y += (dd.y / len) * Math.min(len, temp);
        p.x = Math.max(40, Math.min(width - 40, p.x));
        p.y = Math.max(24, Math.min(height - 24, p.y));
      });
      if (rootId && pos[rootId]) { pos[rootId].x = cx; pos[rootId].y = cy; }
      temp = Math.max(1, temp * 0.985);
    }
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
