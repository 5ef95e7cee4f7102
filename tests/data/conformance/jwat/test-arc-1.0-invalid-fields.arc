filedesc://horsy|\\hello a.b.c.d blue_monday gif\\image one
1 0 InternetArchive
URL IP-address Archive-date Content-type Archive-length

http://cctr.umkc.edu:80/user/jbenz/tst.htm 134.193.4.1 19970417175710 html 4270
HTTP/1.0 200 Sending document
MIME-version: 1.0
Server: OSU/1.8
Content-type: text/html
Content-transfer-encoding: 8bit
Last-Modified: Tuesday, 21-Aug-96 05:14:05 GMT

<HTML>

<HEAD>

<TITLE>Turner Stream Team Home Page</TITLE>



</HEAD>

<BODY>

<body background="ag14c.gif"></body>







<img align=left src="http://cctr.umkc.edu/user/jbenz/tst.gif" alt=" ">



<H1><align=right>The Turner Stream Team HomePage</H1>

<img  align=right src="movingwater.gif"></align=right>

<BR>

<BR>

<P><B>This page is under construction . . .</B>

<img align=right src="/www/pix/hardhat.gif" alt=" ">

<BR>

<BR>

<BR>

<P>

<HR>

<h2>Program Description</h2>

<p><B>The Turner Stream Team is a group of Highland Middle School students that volunteer their time to monitor the water quality of the local streams in our community - Kansas City, KS.  Our goal is to enable and encourage students to be active in protecting their local environment.  Our program consists of four main parts: completing a visual survey, performing nine chemical tests, conducting a benthic macroinvertebrate inventory, and a measuring the stream's discharge rate. We work with others in the community to educate the public of our concerns. 

<P>

The Turner Stream Team is sponsored by <A HREF="http://cctr.umkc.edu/user/jbenz/hms204.htm">Jim Benz</A>.

</B>



</P>



<h2><A HREF="http://cctr.umkc.edu/user/jbenz/tsthist.htm">TST Lessons and Concept Maps<B></B>:</A></h2>





<h2><A HREF="http://cctr.umkc.edu/user/jbenz/what.htm">What TST Does:</A></h2>





<h2><A HREF="http://cctr.umkc.edu/user/jbenz/TSTpartn.htm">TST Partners and Links:</A></h2>





<h2><A HREF="http://cctr.umkc.edu/user/jbenz/TSTForms.htm">TST Forms and Materials:</A></h2>





<h2><A HREF="http://cctr.umkc.edu/user/jbenz/TSTMembers.htm">TST Members:</A></h2><BR><BR>







To see more on how to write HTML,

<a href="http://www.ncsa.uiuc.edu/demoweb/html-primer.html">

a beginners guide</a> is available.<br>

A good

<a href="http://www.ncsa.uiuc.edu/demoweb/url-primer.html">

explanation of URLs</a> is also available from NCSA.<br>

<HR>

There are also some 

<a href="http://cctr.umkc.edu/user/http/startup.html">

tips on getting started </a> using CCTR homepages.

<P>

My URL is http://cctr.umkc.edu/user/jbenz/index.html   

<P>

This document was last updated August 20, 1996.

<P>

<img align=bottom src="/www/pix/spectrum_bar.gif" alt=" ">

<CENTER>

<ADDRESS>

<a href=mailto:jbenz@cctr.umkc.edu>jbenz@cctr.umkc.edu</a>

</ADDRESS>

</CENTER>

</HTML>



















                                                                                                                                                                                                                p*             €ýÿÿÿÿñ  À7J                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               
