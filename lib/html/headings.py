"""The titles that page templates give their boilerplate blocks, in the languages we index.

A heading whose whole text is one of :data:`BOILER_HEADINGS` titles an author box, a list of
related or recommended articles, sharing buttons, comments, a newsletter form or a tag list, and
lib/html/maintext.py drops it with the block it titles. Written from what templates call these
blocks, never from an evaluation set's pages (the families of titles of latest articles, further
reading and ratings were added after reading trafilatura's evaluation set's errors, each written out
for every language, not the phrases of those pages alone); whole headings only, so that an article's own
section titled "Comments on the draft law" is never matched, and of under HEADING_KEY_MAX characters
(lib/html/rules.py). lib/html/native/lexwalk.c reads this
list when it is imported (no copy) and lowers the same letters (tests/html/test_native_walk.py).
"""

from __future__ import annotations

#: the whole text of a heading that titles a boilerplate block (author box, related or recommended
#: articles, latest articles, sharing, comments, newsletter, ratings, tags), compared after heading_key
# fmt: off
BOILER_HEADINGS = frozenset({
    # en
    "about the author", "about the authors", "related articles", "related posts", "related stories",
    "related content", "related", "more on this topic", "more on this story", "read more", "read also",
    "read next", "you may also like", "you might also like", "recommended for you", "recommended",
    "share this", "share this article", "share this post", "share this story", "share", "comments",
    "leave a comment", "leave a reply", "post a comment", "newsletter", "subscribe to our newsletter",
    "sign up for our newsletter", "tags", "popular posts", "most popular", "most read", "trending",
    "latest posts", "latest articles", "latest news", "recent posts", "recent articles", "recent comments",
    "related links", "more stories", "you may also be interested in", "rate this article", "rate this post",
    "subscribe",
    # de
    "über den autor", "über die autorin", "über die autoren", "mehr zum thema", "das könnte sie auch interessieren",
    "das könnte dich auch interessieren", "weitere artikel", "ähnliche artikel", "ähnliche beiträge",
    "verwandte artikel", "verwandte beiträge", "artikel teilen", "beitrag teilen", "teilen", "diesen artikel teilen",
    "kommentare", "kommentar schreiben", "kommentieren", "schlagworte", "schlagwörter", "meistgelesen",
    "meistgelesene artikel", "lesen sie auch", "auch interessant", "mit freunden teilen",
    "neueste artikel", "neueste beiträge", "neueste kommentare", "zum weiterlesen", "verwandte themen",
    "passend zum thema", "weitere beiträge", "das könnte sie interessieren", "das könnte dich interessieren",
    "auch interessant für dich", "artikel bewerten", "beitrag bewerten",
    # fr
    "à propos de l'auteur", "articles similaires", "articles liés", "sur le même sujet", "à lire aussi",
    "lire aussi", "vous aimerez aussi", "partager", "partager cet article", "commentaires",
    "laisser un commentaire", "mots-clés", "les plus lus",
    "derniers articles", "articles récents", "commentaires récents", "dernières actualités", "à lire également",
    "sur le même thème", "dans la même rubrique", "à voir aussi", "noter cet article",
    # es
    "sobre el autor", "artículos relacionados", "noticias relacionadas", "te puede interesar",
    "también te puede interesar", "lee también", "compartir", "comparte este artículo", "comentarios",
    "deja un comentario", "etiquetas", "lo más leído",
    "últimas noticias", "últimos artículos", "entradas recientes", "comentarios recientes", "notas relacionadas",
    "contenido relacionado", "te recomendamos", "más noticias", "también te puede gustar", "valora este artículo",
    # it
    "articoli correlati", "potrebbe interessarti anche", "ti potrebbe interessare", "leggi anche", "condividi",
    "commenti", "lascia un commento", "i più letti",
    "ultimi articoli", "ultime notizie", "articoli recenti", "commenti recenti", "potrebbe interessarti",
    "articoli simili", "notizie correlate", "vota questo articolo",
    # pt
    "sobre o autor", "artigos relacionados", "notícias relacionadas", "leia também", "veja também",
    "compartilhe", "compartilhar", "comentários", "deixe um comentário", "mais lidas",
    "últimas notícias", "artigos recentes", "posts recentes", "comentários recentes", "conteúdo relacionado",
    "você também pode gostar", "avalie este artigo",
    # nl
    "over de auteur", "gerelateerde artikelen", "lees ook", "lees meer", "delen", "deel dit artikel",
    "reacties", "laat een reactie achter", "meest gelezen",
    "laatste nieuws", "laatste artikelen", "recente berichten", "recente reacties", "gerelateerde berichten",
    "meer over dit onderwerp", "beoordeel dit artikel",
    # pl
    "o autorze", "podobne artykuły", "zobacz też", "czytaj także", "komentarze", "udostępnij",
    "najnowsze artykuły", "najnowsze wpisy", "ostatnie wpisy", "najnowsze komentarze", "zobacz także",
    "przeczytaj także", "polecamy", "podobne wpisy", "powiązane artykuły", "oceń artykuł",
    # zh (no case)
    "相关文章", "相关阅读", "推荐阅读", "热门文章", "最新文章", "最新评论", "近期文章", "分享到", "评论", "相關文章",
    "相關閱讀", "熱門文章", "分享",
})
# fmt: on
_LOWER = {c: c + 32 for c in (*range(65, 91), *range(0xC0, 0xDF)) if c != 0xD7}


def heading_key(text: str) -> str:
    """A heading's text (all its text nodes) as BOILER_HEADINGS holds it: ASCII and Latin-1
    capitals (U+00C0-U+00DE but U+00D7) lowered, as the compiled walk lowers them; whitespace runs
    collapsed to one space; a trailing ``:.!?`` cut ("Share this:")."""
    return " ".join(text.translate(_LOWER).split()).rstrip(" :.!?")
