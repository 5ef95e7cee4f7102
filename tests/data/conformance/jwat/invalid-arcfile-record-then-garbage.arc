http://www.bt.dk/node/10297547/print 80.80.12.134 20101217223959 text/html 2248
HTTP/1.1 200 OK
Age: 1         
Date: Fri, 17 Dec 2010 22:39:59 GMT
Expires: Sun, 19 Nov 1978 05:00:00 GMT
Cache-Control: max-age=20        ,must-revalidate,public,post-check=0,pre-check=0,netscaler-rule=anonymous_default
Connection: Keep-Alive
Via: NS-CACHE-9.2:   2
ETag: "KXGCKENHIHPNNTNKYY"
Server: Apache/2.2
X-Node-Id: 10297547
X-Panel-Id: 372
ServedBy: ppweb11
Content-Length: 1772
Keep-Alive: timeout=15, max=89
Content-Type: text/html; charset=utf-8

<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN">
<HTML>
 <HEAD>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />
  <TITLE>  </TITLE>
  <META NAME="Generator" CONTENT="">
  <META NAME="Author" CONTENT="">
  <META NAME="Keywords" CONTENT="">
  <META NAME="Description" CONTENT="">
  <META NAME="ROBOTS" CONTENT="NOINDEX, FOLLOW">
	<link href="/sites/all/themes/erhvervsbladet/css/print_article.css" media="print" rel="Stylesheet" type="text/css" /> 
	<link href="/sites/all/themes/erhvervsbladet/css/print_article.css" media="screen" rel="Stylesheet" type="text/css" /> 


 </HEAD>

<BODY onload="javascript:window.print()">
	<div class="panel-display panel-1col clear-block" >
  <div class="panel-panel panel-col">
    <div class="panel-pane">
<div class="content"><div class="panel-pane">
<div class="content">
<div><h1>Maskerede teenagere truede sig penge</h1></div>

<div><p>Juliane Olsen, Onsdag den 15. december 2010, 22:08</p></div>

<div><h2>To maskerede teenagedrenge har onsdag aften truet sig kontanter og cigaretter i en kiosk i Viby, Århus.</h2></div>

<div><p><p>Det skete kort før klokken halv ni onsdag aften i Viby nord for Århus og gerningsmændene er stadig på fri fod. De blev sidst set løbe mod Højvangsskolen i området.</p>
<p>Den ene dreng beskrives som arabisk udseende og omkring 15-16 år, 170 centimeter og spinkel af bygning. Han er iført grøn elefanthue og mørkegrønne&nbsp;træningsbukser, hvor de hvide strømper er trukket ud over.</p>
<p>Den anden er omkring 16-18 år og taler med udenlandsk accent. Han er omkring 170 centimeter høj og iført mørkt tøj. </p>
<p>Henvendelse i sagen kan ske til Østjyllands politi.</p>
</p></div>
</div>
</div>
</div>
</div>
  </div>
</div>
</BODY>
</HTML>

http://www.bt.dk/node/100