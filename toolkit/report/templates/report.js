/* The report's own script: draw the embedded figures, sort and filter the findings table
   (a check in the by-check table filters it to that check's findings).
   No network, no library but the plotly.js embedded above. */
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

  function setUpSorting(table) {
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
          var body = table.tBodies[0];
          var rows = Array.prototype.slice.call(body.rows);
          rows.forEach(function (row, n) { row._order = n; });
          rows.sort(function (a, b) {
            var x = cellKey(a, index, kind), y = cellKey(b, index, kind);
            var c = x < y ? -1 : x > y ? 1 : a._order - b._order;
            return ascending ? c : -c;
          });
          rows.forEach(function (row) { body.appendChild(row); });
        };
        th.addEventListener("click", sort);
        th.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); }
        });
      })(headers[i], i);
    }
  }

  function setUpFilters(table) {
    var text = document.getElementById("filter-text");
    var selects = { severity: "filter-severity", area: "filter-area", check: "filter-check", state: "filter-state" };
    var waived = document.getElementById("filter-waived");
    var count = document.getElementById("filter-count");
    var apply = function () {
      var needle = text.value.trim().toLowerCase();
      var rows = table.tBodies[0].rows, shown = 0;
      for (var i = 0; i < rows.length; i++) {
        var row = rows[i], visible = true;
        for (var key in selects) {
          var wanted = document.getElementById(selects[key]).value;
          if (wanted && row.getAttribute("data-" + key) !== wanted) { visible = false; }
        }
        if (!waived.checked && row.getAttribute("data-waived") === "yes") { visible = false; }
        if (visible && needle && row.textContent.toLowerCase().indexOf(needle) < 0) { visible = false; }
        row.hidden = !visible;
        if (visible) { shown++; }
      }
      count.textContent = shown + " of " + rows.length + " shown";
    };
    text.addEventListener("input", apply);
    waived.addEventListener("change", apply);
    for (var key in selects) { document.getElementById(selects[key]).addEventListener("change", apply); }
    // A check in the by-check table lists its findings: only its, whatever else was chosen.
    var links = document.querySelectorAll("a.check-link[data-check]");
    for (var i = 0; i < links.length; i++) {
      links[i].addEventListener("click", function () {
        for (var key in selects) { document.getElementById(selects[key]).value = ""; }
        text.value = "";
        waived.checked = true;
        document.getElementById("filter-check").value = this.getAttribute("data-check");
        apply();
      });
    }
  }

  drawCharts();
  var table = document.getElementById("findings-table");
  if (table && table.tBodies.length) { setUpSorting(table); setUpFilters(table); }
  window.addEventListener("beforeprint", resizeCharts);
  window.addEventListener("afterprint", resizeCharts);
})();
