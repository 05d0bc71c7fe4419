/* The report's own script: draw the embedded figures; sort, filter and page the findings
   table (a check in the by-check table, or a team in the summary, filters it to its findings).
   No network, no library but the plotly.js embedded above.

   A fleet's report holds tens of thousands of findings, and a browser that lays out that
   many table rows takes tens of seconds to open, sort or clear a filter. So only one page
   of rows is ever shown: the page renders the rows past the first page hidden, and every
   change here computes the matching rows in memory, then unhides the page asked for and
   hides only the rows that were shown. */
(function () {
  "use strict";
  var CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendDataToCloud"] };

  function drawCharts() {
    var charts = document.querySelectorAll("div.chart[data-figure]");
    for (var i = 0; i < charts.length; i++) {
      var div = charts[i];
      var source = document.getElementById(div.getAttribute("data-figure"));
      if (!source || typeof Plotly === "undefined") { continue; }
      var figure = JSON.parse(source.textContent);
      Plotly.newPlot(div, figure.data, figure.layout, CONFIG);
    }
  }

  function resizeCharts() {
    if (typeof Plotly === "undefined") { return; }
    var charts = document.querySelectorAll("div.chart.js-plotly-plot");
    for (var i = 0; i < charts.length; i++) { Plotly.Plots.resize(charts[i]); }
  }

  function cellKey(row, index, kind) {
    var cell = row.cells[index];
    var value = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    return kind === "number" ? parseFloat(value) : value.trim().toLowerCase();
  }

  function setUpFindings(table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);  // in table order
    var matches = rows.slice();  // the rows the filters let through, in table order
    var page = 0;
    var text = document.getElementById("filter-text");
    var selects = { severity: "filter-severity", area: "filter-area", team: "filter-team", check: "filter-check", state: "filter-state" };
    var waived = document.getElementById("filter-waived");
    var count = document.getElementById("filter-count");
    var size = document.getElementById("page-size");
    var prev = document.getElementById("page-prev");
    var next = document.getElementById("page-next");
    var where = document.getElementById("page-info");

    function rowText(row) {  // read once: textContent of every row on each keystroke is slow
      if (row._text === undefined) { row._text = row.textContent.toLowerCase(); }
      return row._text;
    }

    function show() {
      var per = parseInt(size.value, 10) || matches.length || 1;
      var pages = Math.max(1, Math.ceil(matches.length / per));
      page = Math.min(Math.max(page, 0), pages - 1);
      var start = page * per, end = Math.min(matches.length, start + per);
      for (var i = start; i < end; i++) { matches[i]._shown = true; }
      for (var j = 0; j < rows.length; j++) {
        var row = rows[j], hide = !row._shown;
        if (row.hidden !== hide) { row.hidden = hide; }
        row._shown = false;
      }
      count.textContent = matches.length + " of " + rows.length + " match";
      where.textContent = matches.length ? "rows " + (start + 1) + "\u2013" + end : "no rows";
      prev.disabled = start === 0;
      next.disabled = end >= matches.length;
    }

    function filter() {
      var needle = text.value.trim().toLowerCase();
      var wanted = {};
      for (var key in selects) { wanted[key] = document.getElementById(selects[key]).value; }
      matches = rows.filter(function (row) {
        for (var key in wanted) {
          if (wanted[key] && row.getAttribute("data-" + key) !== wanted[key]) { return false; }
        }
        if (!waived.checked && row.getAttribute("data-waived") === "yes") { return false; }
        return !needle || rowText(row).indexOf(needle) >= 0;
      });
      page = 0;
      show();
    }

    function setUpSorting() {
      var headers = table.tHead.rows[0].cells;
      for (var i = 0; i < headers.length; i++) {
        (function (th, index) {
          if (!th.hasAttribute("data-sort")) { return; }
          th.tabIndex = 0;
          th.setAttribute("role", "button");
          var sort = function () {
            var ascending = th.getAttribute("aria-sort") !== "ascending";
            for (var j = 0; j < headers.length; j++) { headers[j].removeAttribute("aria-sort"); }
            th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
            var kind = th.getAttribute("data-sort");
            var keyed = rows.map(function (row, n) { return { row: row, key: cellKey(row, index, kind), n: n }; });
            keyed.sort(function (a, b) {  // ties keep their order, whichever the direction
              var c = a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
              return (ascending ? c : -c) || a.n - b.n;
            });
            rows = keyed.map(function (k) { return k.row; });
            var ordered = document.createDocumentFragment();
            rows.forEach(function (row) { ordered.appendChild(row); });
            body.appendChild(ordered);
            filter();
          };
          th.addEventListener("click", sort);
          th.addEventListener("keydown", function (e) {
            if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
          });
        })(headers[i], i);
      }
    }

    text.addEventListener("input", filter);
    waived.addEventListener("change", filter);
    for (var key in selects) { document.getElementById(selects[key]).addEventListener("change", filter); }
    size.addEventListener("change", show);
    prev.addEventListener("click", function () { page -= 1; show(); });
    next.addEventListener("click", function () { page += 1; show(); });
    // A check in the by-check table, or a team in the summary, lists its findings (a team's
    // unwaived ones, as its row counts them), whatever else was chosen.
    var links = document.querySelectorAll("a.filter-link[data-filter]");
    for (var i = 0; i < links.length; i++) {
      links[i].addEventListener("click", function () {
        for (var key in selects) { document.getElementById(selects[key]).value = ""; }
        text.value = "";
        waived.checked = this.getAttribute("data-waived") !== "no";
        document.getElementById("filter-" + this.getAttribute("data-filter")).value = this.getAttribute("data-value");
        filter();
      });
    }
    setUpSorting();
    show();
  }

  drawCharts();
  var table = document.getElementById("findings-table");
  if (table && table.tBodies.length) { setUpFindings(table); }
  window.addEventListener("beforeprint", resizeCharts);
  window.addEventListener("afterprint", resizeCharts);
})();
