//! `report.html`: one self-contained file (inline CSS, script, data and
//! timeline pictures; no network). The latency curves are drawn by a small
//! inline script into SVG: log counts, linear µs, a legend whose entries
//! hide/show their curve (as gnuplot's key toggles in the systress article), and a
//! hover read-out of every visible curve at the pointed latency.
//!
//! Test hook: opening the page as `report.html#selftest` clicks the first
//! legend entry once loaded and writes what it saw into
//! `<pre id="selftest">` (curves drawn, curves visible before and after,
//! script errors), so a headless browser's `--dump-dom` can check it.

use crate::load::Run;
use crate::series::Series;
use crate::table::Table;
use rtshield_text::markup_text as html_escape;
use serde_json::{json, Value};

pub(crate) struct Inputs<'a> {
    pub title: &'a str,
    pub runs: &'a [Run],
    pub series: &'a [Series<'a>],
    pub table: &'a Table,
    /// (caption, PNG bytes) of each timeline picture.
    pub timelines: &'a [(String, Vec<u8>)],
    /// The percentile plot (PNG bytes).
    pub percentiles: &'a [u8],
    /// `--x-max`.
    pub x_max: Option<f64>,
}

pub(crate) fn render(inp: &Inputs) -> String {
    // Axis ranges and legend text come from the same code as the PNG/SVG.
    let x_end = crate::plot::x_range(inp.series, inp.x_max);
    let data = json!({
        "title": inp.title,
        "xmax": x_end,
        "ymax": crate::plot::y_range(inp.series),
        "series": inp.series.iter().map(|s| json!({
            "label": s.label,
            "color": s.css_color(),
            "res_us": s.res_ns as f64 / 1000.0,
            "points": s.points.iter().map(|p| json!([p.0, p.1])).collect::<Vec<_>>(),
            // Runs of adjacent buckets [first, end) into `points`: the
            // curve breaks at empty buckets.
            "segments": s.segments.iter().map(|r| json!([r.start, r.end])).collect::<Vec<_>>(),
            // No histogram: null (no overflow count), not 0.
            "overflow": s.has_histogram().then(|| s.overflow()),
            // Samples past the axis end (overflow included): the marker's count.
            "beyond": s.beyond(x_end),
            "hist_end_us": s.hist_end_us,
            "max_us": s.max_us(),
            "note": s.note(x_end),
            // What the source did not record is null, not a made-up 0.
            "samples": s.thread.samples,
            "overruns": s.thread.overruns,
            "policy": s.thread.policy.map(|p| p.name()),
            "priority": s.thread.priority,
        })).collect::<Vec<_>>(),
    });
    // `<` only occurs inside JSON strings, where \u003c is the same text:
    // the data can never close its <script> element; controls and
    // bidirectional characters become visible text.
    let data = rtshield_text::markup::script_json(&data.to_string());
    let esc = html_escape;
    let mut h = String::new();
    h.push_str(&format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"generator\" content=\"rtshield report\">\n<title>{}</title>\n<style>{CSS}</style>\n\
         <script>window.__rtsErrors=[];window.addEventListener('error',function(e){{window.__rtsErrors.push(String(e.message));}});</script>\n\
         </head>\n<body>\n<h1>{}</h1>\n",
        esc(inp.title),
        esc(inp.title)
    ));
    h.push_str("<h2>Latency histograms</h2>\n<p class=\"hint\">Click a legend entry to hide or show its curve; hover the plot to read the counts.</p>\n");
    h.push_str("<div id=\"chart\"><svg id=\"plot\" viewBox=\"0 0 1000 560\" role=\"img\" aria-label=\"latency histograms\"></svg><div id=\"tip\" hidden></div></div>\n<ul id=\"legend\"></ul>\n");
    h.push_str("<h2>Tail (percentiles)</h2>\n<p class=\"hint\">Share of the samples at or above each latency, both axes logarithmic (HdrHistogram's and jitterplot's view): 10<sup>-3</sup> is the p99.9, 10<sup>-6</sup> the p99.9999; the dot is the maximum.</p>\n");
    h.push_str(&format!(
        "<figure><img class=\"timeline\" alt=\"percentile plot\" src=\"data:image/png;base64,{}\"></figure>\n",
        base64(inp.percentiles)
    ));
    h.push_str("<h2>Summary</h2>\n");
    h.push_str(&inp.table.to_html());
    if !inp.table.worst.is_empty() {
        h.push_str("<h2>Worst cases</h2>\n<p class=\"hint\">Each new maximum and when it happened (time since the start).</p>\n");
        h.push_str(&crate::table::worst_cases_html(&inp.table.worst));
    }
    h.push_str(&crate::spikes::html(inp.runs));
    if !inp.timelines.is_empty() {
        h.push_str("<h2>Timeline</h2>\n<p class=\"hint\">Per-interval maximum (points) and running maximum (line); shaded: load phases.</p>\n");
        for (cap, png) in inp.timelines {
            h.push_str(&format!(
                "<figure><img class=\"timeline\" alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>\n",
                esc(cap),
                base64(png)
            ));
        }
    }
    h.push_str("<h2>Runs</h2>\n");
    for run in inp.runs {
        h.push_str(&run_details(run));
    }
    h.push_str(&format!(
        "<pre id=\"selftest\" hidden></pre>\n<script type=\"application/json\" id=\"rts-data\">{data}</script>\n<script>{JS}</script>\n</body>\n</html>\n"
    ));
    h
}

/// Everything the run file says about where it came from.
fn run_details(run: &Run) -> String {
    let r = &run.result;
    let esc = html_escape;
    let mut s = format!(
        "<details class=\"run\"><summary><b>{}</b> — {}</summary>\n<table class=\"kv\">\n",
        esc(&run.label),
        esc(&run.path.display().to_string())
    );
    let mut kv = |k: &str, v: String| {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            esc(k),
            esc(&v)
        ));
    };
    kv("tool", r.tool.clone());
    use crate::table::q;
    kv("started", q(r.started_at.as_ref()));
    kv("duration", q(r.duration_s.map(|d| format!("{d:.1} s"))));
    kv("end", q(r.end_reason.as_ref()));
    kv("command", r.command.join(" "));
    kv("mode", q(r.settings.mode.as_ref()));
    kv("resolution", format!("{} ns", r.settings.resolution_ns));
    for (k, v) in &r.tags {
        kv(&format!("tag {k}"), v.clone());
    }
    for t in &r.threads {
        kv(
            &format!("thread {}", t.index),
            format!(
                "cpu {} · {} {} · period {} µs · lost {} · missed periods {}",
                t.cpu.map_or("-".into(), |c| c.to_string()),
                q(t.policy),
                q(t.priority),
                q(t.period_ns.map(|p| p as f64 / 1000.0)),
                q(t.lost),
                q(t.missed_periods)
            ),
        );
    }
    for p in &r.programs {
        kv(
            &format!("program {}", p.index),
            format!(
                "{} · cpus {} · spawns {} · ok {} · ko {}",
                p.command,
                p.cpus.as_deref().unwrap_or("-"),
                p.spawns,
                p.exits_ok,
                p.exits_ko
            ),
        );
    }
    for w in &r.warnings {
        kv("warning", w.clone());
    }
    // sysinfo: every member that has a value, in the schema's order.
    if let Ok(Value::Object(m)) = serde_json::to_value(&r.sysinfo) {
        for (k, v) in m {
            let text = match v {
                Value::Null => continue,
                Value::String(s) => s,
                Value::Object(o) if o.is_empty() => continue,
                Value::Object(o) => o
                    .iter()
                    .map(|(a, b)| match b.as_str() {
                        Some("") => a.clone(),
                        Some(b) => format!("{a}={b}"),
                        None => format!("{a}={b}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                other => other.to_string(),
            };
            kv(&format!("sysinfo {k}"), text);
        }
    }
    s.push_str("</table>\n");
    if let Some(c) = &r.config {
        s.push_str(&format!(
            "<p>Configuration:</p>\n<pre class=\"config\">{}</pre>\n",
            esc(c)
        ));
    }
    s.push_str("</details>\n");
    s
}

/// Standard base64 with padding (RFC 4648), for the inline pictures.
pub(crate) fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut o = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        o.push(A[(n >> 18) as usize & 63] as char);
        o.push(A[(n >> 12) as usize & 63] as char);
        o.push(if c.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        o.push(if c.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    o
}

const CSS: &str = r#"
body{font-family:"DejaVu Sans",Verdana,sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
.hint{color:#666;font-size:.9em}
#chart{position:relative}
#plot{width:100%;height:auto;background:#fff;border:1px solid #ddd}
#plot text{font-size:13px;fill:#333}
#plot .grid{stroke:#eee}
#plot .axis{stroke:#888}
#tip{position:absolute;pointer-events:none;background:rgba(255,255,255,.95);border:1px solid #aaa;padding:4px 8px;font-size:12px;white-space:nowrap}
#legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 14px}
#legend li{cursor:pointer;user-select:none;padding:2px 6px;border-radius:3px}
#legend li:hover{background:#f2f2f2}
#legend li.off{opacity:.35;text-decoration:line-through}
#legend .sw{display:inline-block;width:22px;height:4px;margin-right:6px;vertical-align:middle}
#legend small{color:#666}
table.summary{border-collapse:collapse;font-size:.9em}
table.summary th,table.summary td{border:1px solid #ddd;padding:3px 8px;text-align:right}
table.summary thead th{background:#f5f5f5}
table.summary tbody th{text-align:left;font-weight:normal;background:#fafafa}
table.summary tr.prov td{color:#555;text-align:left}
img.timeline{max-width:100%;border:1px solid #ddd}
details.run{margin:.5em 0}
table.kv{border-collapse:collapse;font-size:.85em}
table.kv th{text-align:left;font-weight:normal;color:#555;padding:1px 10px 1px 0;vertical-align:top}
pre.config{background:#f7f7f7;padding:.6em;overflow:auto}
"#;

const JS: &str = r#"
(function(){
'use strict';
var D=JSON.parse(document.getElementById('rts-data').textContent);
var NS='http://www.w3.org/2000/svg';
var svg=document.getElementById('plot'),tip=document.getElementById('tip'),leg=document.getElementById('legend');
var W=1000,H=560,L=80,R=20,T=20,B=50;
function el(n,a,p){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);(p||svg).appendChild(e);return e;}
var xmax=D.xmax,ymax=D.ymax;
var ly0=Math.log10(0.8),ly1=Math.log10(ymax);
function X(v){return L+(W-L-R)*v/xmax;}
function Y(v){return T+(H-T-B)*(1-(Math.log10(Math.max(v,0.8))-ly0)/(ly1-ly0));}
function nice(span,n){var s=span/n,m=Math.pow(10,Math.floor(Math.log10(s))),f=s/m;return (f<1.5?1:f<3.5?2:f<7.5?5:10)*m;}
var step=nice(xmax,10);
for(var x=0;x<=xmax;x+=step){
  el('line',{x1:X(x),x2:X(x),y1:T,y2:H-B,'class':'grid'});
  var t=el('text',{x:X(x),y:H-B+18,'text-anchor':'middle'});t.textContent=+x.toFixed(6);
}
for(var e=0;Math.pow(10,e)<=ymax;e++){
  var v=Math.pow(10,e);
  el('line',{x1:L,x2:W-R,y1:Y(v),y2:Y(v),'class':'grid'});
  var t2=el('text',{x:L-8,y:Y(v)+4,'text-anchor':'end'});t2.textContent=v>=1e6?(v/1e6)+'M':v>=1e3?(v/1e3)+'k':v;
}
el('line',{x1:L,x2:W-R,y1:H-B,y2:H-B,'class':'axis'});
el('line',{x1:L,x2:L,y1:T,y2:H-B,'class':'axis'});
var xl=el('text',{x:(L+W-R)/2,y:H-8,'text-anchor':'middle'});xl.textContent='latency (\u00b5s)';
var yl=el('text',{x:16,y:(T+H-B)/2,'text-anchor':'middle',transform:'rotate(-90 16 '+(T+H-B)/2+')'});yl.textContent='samples (log)';
var groups=[],nOvf=0;
D.series.forEach(function(s,i){
  var g=el('g',{'class':'series','data-series':i});
  // One subpath per run of adjacent buckets; a lone bucket is a dot.
  // Only the buckets on the axis (--x-max may cut it).
  var on=function(p){return p[0]<=xmax;};
  var d=s.segments.map(function(r){return s.points.slice(r[0],r[1]).filter(on).map(function(p,j){return (j?'L':'M')+X(p[0]).toFixed(2)+' '+Y(p[1]).toFixed(2);}).join('');}).join('');
  el('path',{'class':'curve',d:d,fill:'none',stroke:s.color,'stroke-width':2,'stroke-linejoin':'round'},g);
  s.segments.forEach(function(r){if(r[1]-r[0]===1&&on(s.points[r[0]])){var p=s.points[r[0]];
    el('circle',{'class':'dot',cx:X(p[0]).toFixed(2),cy:Y(p[1]).toFixed(2),r:2.5,fill:s.color},g);}});
  if(s.max_us<=xmax){var mx=X(s.max_us);
    el('line',{'class':'max',x1:mx,x2:mx,y1:H-B,y2:H-B-14,stroke:s.color,'stroke-width':4},g);}
  // At the right edge, side by side: equal counts do not hide each other.
  if(s.beyond>0){var ox=X(xmax)-(nOvf+0.5)*14,oy=Y(s.beyond);nOvf++;
    el('path',{'class':'ovf',d:'M'+ox+' '+(oy-7)+'l6 11h-12z',fill:s.color},g);}
  groups.push(g);
  var li=document.createElement('li');li.setAttribute('data-series',i);
  li.innerHTML='<span class="sw"></span><span class="lab"></span> <small></small>';
  li.querySelector('.sw').style.background=s.color;
  li.querySelector('.lab').textContent=s.label;
  li.querySelector('small').textContent=s.note;
  li.addEventListener('click',function(){toggle(i);});
  leg.appendChild(li);
});
function toggle(i){var g=groups[i],off=g.style.display!=='none';g.style.display=off?'none':'';
  leg.children[i].classList.toggle('off',off);}
var guide=el('line',{x1:0,x2:0,y1:T,y2:H-B,stroke:'#999','stroke-dasharray':'3 3',visibility:'hidden'});
function near(pts,x,res){var lo=0,hi=pts.length-1;if(hi<0)return null;
  while(lo<hi){var m=(lo+hi)>>1;if(pts[m][0]<x)lo=m+1;else hi=m;}
  var best=pts[lo];if(lo>0&&Math.abs(pts[lo-1][0]-x)<Math.abs(best[0]-x))best=pts[lo-1];
  return Math.abs(best[0]-x)<=Math.max(res,xmax/400)?best:null;}
svg.addEventListener('mousemove',function(ev){
  var r=svg.getBoundingClientRect(),px=(ev.clientX-r.left)*W/r.width;
  if(px<L||px>W-R){tip.hidden=true;guide.setAttribute('visibility','hidden');return;}
  var x=(px-L)/(W-L-R)*xmax,rows=[];
  D.series.forEach(function(s,i){if(groups[i].style.display==='none')return;
    var p=near(s.points,x,s.res_us);if(p)rows.push('<span style="color:'+s.color+'">\u25a0</span> '+esc(s.label)+': '+p[1]+' @ '+p[0]+' \u00b5s');});
  guide.setAttribute('x1',px);guide.setAttribute('x2',px);guide.setAttribute('visibility','visible');
  tip.innerHTML='<b>'+x.toFixed(1)+' \u00b5s</b><br>'+(rows.length?rows.join('<br>'):'no samples');
  tip.hidden=false;tip.style.left=Math.min(ev.clientX-r.left+14,r.width-220)+'px';tip.style.top=(ev.clientY-r.top+10)+'px';
});
svg.addEventListener('mouseleave',function(){tip.hidden=true;guide.setAttribute('visibility','hidden');});
function esc(s){return s.replace(/[&<>"]/g,function(c){return {'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
function visible(){return groups.filter(function(g){return g.style.display!=='none'&&getComputedStyle(g).display!=='none';}).length;}
window.rtshieldReport={toggle:toggle,visible:visible,curves:function(){return svg.querySelectorAll('path.curve').length;}};
if(location.hash==='#selftest'){
  var out={series:D.series.length,curves:svg.querySelectorAll('path.curve').length,legend:leg.children.length,visibleBefore:visible()};
  // Hover over the first curve's first point: the read-out names it.
  var s0=D.series[0],p0=s0&&s0.points[0];
  if(p0){var r=svg.getBoundingClientRect();
    svg.dispatchEvent(new MouseEvent('mousemove',{clientX:r.left+X(p0[0])*r.width/W,clientY:r.top+Y(p0[1])*r.height/H,bubbles:true}));
    out.hover=!tip.hidden&&tip.textContent.indexOf(s0.label+': '+p0[1])>=0;}
  if(leg.children.length){leg.children[0].click();}
  out.visibleAfter=visible();
  out.firstHidden=groups.length?getComputedStyle(groups[0]).display==='none':false;
  out.errors=window.__rtsErrors;
  var st=document.getElementById('selftest');st.textContent='SELFTEST '+JSON.stringify(out);st.hidden=false;
}
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_rfc4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }
}
