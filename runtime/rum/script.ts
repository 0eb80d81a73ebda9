/**
 * `/rum.js` (gslb-api.md §4; docs/rum.md "The script"): embedded as
 * `<script src="https://gslb.example.com/rum.js" data-domain="www.example.com" async></script>`.
 * Two seconds after the page's load event it asks `/api/v1/rum/config` for the service's targets,
 * times a no-cors, uncached GET of each member's rumUrl one after the other (so they do not compete
 * for the visitor's bandwidth), and sends the samples with `navigator.sendBeacon` as `text/plain`
 * (a CORS-safelisted type: no preflight). `data-domain` defaults to the page's host name. Written
 * by hand in ES5 so every browser runs it as is; kept under 2 KB.
 */
export const RUM_SCRIPT = `(function(){
var s=document.currentScript;if(!s||!window.fetch||!navigator.sendBeacon)return;
var d=s.getAttribute('data-domain')||location.hostname,b=new URL(s.src,location.href).origin;
function now(){return performance.now()}
function run(){
fetch(b+'/api/v1/rum/config?domain='+encodeURIComponent(d),{credentials:'omit'}).then(function(r){return r.ok?r.json():null}).then(function(c){
if(!c||!c.targets||!c.targets.length)return;
var out=[],t=c.targets.slice(0,32),i=0;
function next(){
if(i>=t.length){if(out.length)navigator.sendBeacon(b+'/api/v1/rum/ingest',new Blob([JSON.stringify({domain:c.domain,samples:out})],{type:'text/plain'}));return}
var x=t[i++],u=x.url+(x.url.indexOf('?')<0?'?':'&')+'_rum='+Date.now().toString(36)+Math.random().toString(36).slice(2),t0=now();
fetch(u,{mode:'no-cors',cache:'no-store',credentials:'omit'}).then(function(){out.push({ip:x.ip,ms:Math.max(0.1,Math.round((now()-t0)*10)/10)})},function(){}).then(next)}
next()})['catch'](function(){})}
function later(){setTimeout(run,2000)}
if(document.readyState==='complete')later();else window.addEventListener('load',later)
})();
`;
