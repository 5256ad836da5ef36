"""The generated pages of the table truth set (``generate.py`` draws them): per layout its
tables (cell texts, column widths, style, merged cells) and the page furniture's texts.

Contents are invented but shaped like the real documents: French, English and Italian bank
statements, a Chinese one; German, English, Spanish and Italian invoices; Swedish, Dutch, Danish
and Chinese price lists; English, Japanese and Portuguese tables from papers. Names, numbers and
addresses are made up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Rows = list[list[str]]
Span = tuple[int, int, int, int]  # row, col, rowspan, colspan (rows counted from the first header row)


@dataclass
class TableSpec:
    header: Rows  # header rows; a slot covered by a span (not its anchor) is ""
    body: Rows
    widths: list[float]  # column widths (pt)
    align: str  # per column: l or r
    style: str  # see generate.py
    spans: list[Span] = field(default_factory=list)
    size: float = 9.0
    sections: set[int] = field(default_factory=set)  # body rows that are section titles (col 0 only)

    def expanded(self) -> Rows:
        """The expected CSV: every slot of a merged cell holds the merged cell's text."""
        rows = [list(r) for r in self.header + self.body]
        for r, c, rs, cs in self.spans:
            for rr in range(r, r + rs):
                for cc in range(c, c + cs):
                    rows[rr][cc] = rows[r][c]
        return rows


@dataclass
class Layout:
    name: str
    kind: str  # bank_statement | invoice | price_list | scientific
    lang: str
    tables: list[TableSpec]
    furniture: str  # title-grid | title-band | invoice | pricelist | paper (generate._furniture)
    scan: dict  # dpi, skew (degrees), blur, noise, format (png | jpg | pdf), seed


TEXTS: dict[str, dict] = {}
LAYOUTS: list[Layout] = []


def _add(lay: Layout, texts: dict) -> None:
    LAYOUTS.append(lay)
    TEXTS[lay.name] = texts


# --- bank statements -------------------------------------------------------------------------

_add(Layout("statement-fr", "bank_statement", "fr", [TableSpec(
    [["Date", "Libellé des opérations", "Débit (€)", "Crédit (€)"]],
    [["02/10/2026", "Virement reçu SARL Atelier Lumière salaire septembre", "", "2 950,00"],
     ["03/10/2026", "Carte 02/10 Boulangerie Saint-Paul Lyon", "8,40", ""],
     ["05/10/2026", "Prélèvement SEPA Énergie du Rhône échéance octobre référence EDR-2026-445", "96,20", ""],
     ["07/10/2026", "Retrait DAB Lyon Bellecour", "60,00", ""],
     ["09/10/2026", "Carte 08/10 Pharmacie des Terreaux", "23,75", ""],
     ["12/10/2026", "Prélèvement loyer SCI Les Tanneurs", "845,00", ""],
     ["15/10/2026", "Virement à Mme Claire Marchand participation vacances de la Toussaint", "300,00", ""],
     ["18/10/2026", "Carte 17/10 Librairie du Vieux Lyon", "31,90", ""],
     ["21/10/2026", "Remboursement Assurance Maladie", "", "42,60"],
     ["24/10/2026", "Prélèvement Mutuelle Santé Rhône-Alpes", "64,31", ""],
     ["28/10/2026", "Cotisation carte bancaire", "12,00", ""],
     ["30/10/2026", "Intérêts créditeurs", "", "1,18"]],
    [72, 263, 90, 90], "llrr", "band")], "title-band",
    {"dpi": 200, "skew": 0.45, "blur": 0.8, "noise": 9, "format": "jpg", "quality": 65, "seed": 11}),
    {"bank": "Banque du Rhône", "title": "Relevé de compte n° 10",
     "address": ["M. Julien Marchand", "14 rue des Tanneurs", "69002 Lyon"],
     "info": ["Compte courant n° 00412 558 903", "Période du 01/10/2026 au 31/10/2026",
              "Solde au 30/09/2026 : 2 418,35 €"],
     "totals": [("Total des opérations", "1 441,56"), ("Nouveau solde", "3 970,57 €")],
     "outro": "Banque du Rhône, société anonyme au capital de 12 000 000 €, 8 place Bellecour, 69002 Lyon. "
              "En cas de réclamation, contactez votre conseiller ou le médiateur de la banque."})

_add(Layout("statement-zh", "bank_statement", "zh", [TableSpec(
    [["记账日期", "交易摘要", "对方户名", "支出", "存入", "余额"]],
    [["2026-10-02", "工资", "江南精密机械有限公司", "", "9,800.00", "21,436.52"],
     ["2026-10-03", "快捷支付", "上海浦东新区自来水有限公司", "86.40", "", "21,350.12"],
     ["2026-10-05", "转账", "李红梅", "1,500.00", "", "19,850.12"],
     ["2026-10-08", "消费", "杭州西湖区联华超市", "263.75", "", "19,586.37"],
     ["2026-10-11", "房租", "杭州安居房屋租赁服务有限公司", "3,200.00", "", "16,386.37"],
     ["2026-10-15", "利息", "", "", "12.84", "16,399.21"],
     ["2026-10-19", "消费", "中国石化加油站", "320.00", "", "16,079.21"],
     ["2026-10-24", "转账", "王建国", "", "600.00", "16,679.21"],
     ["2026-10-28", "电费", "国网浙江省电力有限公司", "158.60", "", "16,520.61"],
     ["2026-10-31", "年费", "", "10.00", "", "16,510.61"]],
    [72, 70, 145, 74, 74, 80], "lllrrr", "grid")], "title-grid",
    {"dpi": 300, "skew": -0.3, "blur": 0.9, "noise": 10, "format": "png", "seed": 12}),
    {"bank": "江南商业银行", "info": ["户名：王晓明", "账号：6222 0210 0104 5567",
                                      "起止日期：2026-10-01 至 2026-10-31", "币种：人民币"],
     "outro": "本对账单仅供参考，如有疑问请致电客服热线 95588。"})

_add(Layout("statement-en", "bank_statement", "en", [TableSpec(
    [["Date", "Description", "Money out (£)", "Money in (£)", "Balance (£)"]],
    [["01 Nov", "Balance brought forward", "", "", "1,204.18"],
     ["03 Nov", "Card payment Tesco Stores 2231 Bristol", "42.17", "", "1,162.01"],
     ["04 Nov", "Direct debit Bristol Water", "31.50", "", "1,130.51"],
     ["06 Nov", "Faster payment from K Hughes rent share November", "", "450.00", "1,580.51"],
     ["10 Nov", "Standing order Harbour Building Society mortgage", "812.64", "", "767.87"],
     ["14 Nov", "Cash withdrawal Clifton", "40.00", "", "727.87"],
     ["18 Nov", "Card payment Clifton Books", "15.99", "", "711.88"],
     ["25 Nov", "Salary Avonmouth Logistics", "", "2,310.45", "3,022.33"],
     ["28 Nov", "Direct debit Council Tax", "146.00", "", "2,876.33"]],
    [55, 220, 80, 80, 80], "llrrr", "zebra")], "title-band",
    {"dpi": 200, "skew": 0.7, "blur": 0.7, "noise": 8, "format": "pdf", "quality": 70, "seed": 13}),
    {"bank": "Harbour Bank", "title": "Current account statement",
     "address": ["Ms Rhiannon Hughes", "22 Cornwallis Crescent", "Bristol BS8 4PL"],
     "info": ["Sort code 40-17-22", "Account number 71234456", "1 November to 30 November 2026"],
     "outro": "Harbour Bank plc is authorised by the Prudential Regulation Authority. Please check this "
              "statement and tell us at once about any entry you do not recognise."})

_add(Layout("statement-it", "bank_statement", "it", [TableSpec(
    [["Data", "Valuta", "Descrizione operazione", "Addebiti", "Accrediti"]],
    [["01/09/2026", "01/09/2026", "Bonifico a vostro favore da Studio Ferri stipendio agosto", "", "1.870,00"],
     ["03/09/2026", "03/09/2026", "Pagamento POS Coop Lombardia Como", "54,32", ""],
     ["05/09/2026", "04/09/2026", "Addebito SDD Acqua Lariana", "38,90", ""],
     ["09/09/2026", "09/09/2026", "Prelievo Bancomat Como centro", "100,00", ""],
     ["12/09/2026", "12/09/2026", "Canone mensile conto", "6,50", ""],
     ["16/09/2026", "16/09/2026", "Bonifico da Rossi Giulia rimborso spese viaggio Bergamo", "", "75,00"],
     ["22/09/2026", "21/09/2026", "Pagamento POS Farmacia del Duomo", "18,60", ""],
     ["29/09/2026", "29/09/2026", "Addebito rata prestito n. 448120", "310,00", ""]],
    [68, 68, 219, 80, 80], "lllrr", "grey-hrules")], "title-grid",
    {"dpi": 150, "skew": -0.5, "blur": 0.6, "noise": 7, "format": "jpg", "quality": 75, "seed": 14}),
    {"bank": "Banca Popolare del Lario", "info": ["Intestatario: Marco Ferri", "IBAN IT60 X054 2811 1010 0000 0123 456",
                                                   "Estratto conto dal 01/09/2026 al 30/09/2026"],
     "outro": "Saldo contabile finale al 30/09/2026: 2.612,68 EUR. Le condizioni economiche sono "
              "riportate nel documento di sintesi allegato."})

# --- invoices --------------------------------------------------------------------------------

_add(Layout("invoice-de", "invoice", "de", [TableSpec(
    [["Pos.", "Artikel", "Menge", "Einzelpreis (€)", "Betrag (€)"]],
    [["1", "Teigknetmaschine TK 40, Edelstahl, mit Sicherheitsgitter und Zeitschaltuhr", "1", "2.980,00", "2.980,00"],
     ["2", "Backbleche gelocht 60 x 40 cm", "20", "18,50", "370,00"],
     ["3", "Gärkorb rund, Peddigrohr", "12", "9,80", "117,60"],
     ["4", "Teigschaber Edelstahl", "6", "4,90", "29,40"],
     ["5", "Montage und Einweisung vor Ort durch unseren Servicetechniker", "3", "85,00", "255,00"],
     ["6", "Anfahrtspauschale München", "1", "60,00", "60,00"],
     ["7", "Wartungsvertrag Basis, 12 Monate", "1", "500,00", "500,00"]],
    [38, 247, 50, 90, 90], "llrrr", "grey-grid")], "invoice",
    {"dpi": 200, "skew": 0.35, "blur": 0.9, "noise": 10, "format": "png", "seed": 21}),
    {"sender": "Müller & Söhne GmbH", "sender_line": "Müller & Söhne GmbH · Industriestraße 12 · 70565 Stuttgart",
     "address": ["Bäckerei Hofmann", "Frau Anna Hofmann", "Lindenallee 7", "80331 München"],
     "details": [("Rechnungsnr.", "2026-1187"), ("Datum", "14.11.2026"), ("Kundennr.", "K-40211"),
                 ("Lieferdatum", "12.11.2026")],
     "title": "Rechnung",
     "totals": [("Nettobetrag", "4.312,00"), ("USt. 19 %", "819,28"), ("Gesamtbetrag", "5.131,28")],
     "outro": "Zahlbar innerhalb von 14 Tagen ohne Abzug. Bankverbindung: Volksbank Stuttgart, "
              "IBAN DE12 6009 0100 0123 4567 89."})

_add(Layout("invoice-en", "invoice", "en", [TableSpec(
    [["Item", "Description", "Qty", "Unit price", "Amount"]],
    [["NW-1042", "Mooring line, 16 mm polyester, three-strand, per 50 m coil", "4", "89.00", "356.00"],
     ["NW-2210", "Fender, inflatable, 25 x 100 cm", "6", "42.50", "255.00"],
     ["NW-0307", "Stainless shackle 8 mm", "20", "3.95", "79.00"],
     ["NW-5521", "Bilge pump 1100 gph with float switch and mounting kit", "1", "164.00", "164.00"],
     ["NW-0999", "Delivery to Falmouth marina", "1", "25.00", "25.00"]],
    [60, 245, 45, 80, 85], "llrrr", "grid")], "invoice",
    {"dpi": 300, "skew": 0.2, "blur": 1.0, "noise": 11, "format": "pdf", "quality": 65, "seed": 22}),
    {"sender": "Northwind Marine Supply Ltd.", "sender_line": "Northwind Marine Supply Ltd. · 4 Quay Road · Penryn TR10 8AD",
     "address": ["Falmouth Sailing Club", "Attn. Treasurer", "The Boathouse", "Falmouth TR11 3XA"],
     "details": [("Invoice no.", "INV-30418"), ("Date", "2 December 2026"), ("Customer", "C-0872"),
                 ("Due date", "1 January 2027")],
     "title": "Invoice",
     "totals": [("Subtotal", "879.00"), ("VAT 20 %", "175.80"), ("Total due", "1,054.80")]})

_add(Layout("invoice-es", "invoice", "es", [TableSpec(
    [["Código", "Descripción", "Cant.", "Precio", "Importe"]],
    [["A-1201", "Aceite de oliva virgen extra 5 l", "10", "38,50", "385,00"],
     ["A-1344", "Almendra marcona tostada 1 kg", "25", "14,20", "355,00"],
     ["B-0210", "Queso manchego curado pieza 3 kg", "6", "52,75", "316,50"],
     ["B-0388", "Jamón serrano reserva", "2", "96,00", "192,00"],
     ["C-0017", "Vinagre de Jerez 750 ml", "12", "4,60", "55,20"],
     ["C-0105", "Azafrán de La Mancha 4 g", "8", "11,90", "95,20"]],
    [60, 245, 50, 75, 85], "llrrr", "unruled")], "invoice",
    {"dpi": 200, "skew": -0.6, "blur": 0.7, "noise": 9, "format": "jpg", "quality": 70, "seed": 23}),
    {"sender": "Distribuciones Almendro S.L.", "sender_line": "Distribuciones Almendro S.L. · Calle Mayor 28 · 13001 Ciudad Real",
     "address": ["Ultramarinos La Giralda", "Avenida de la Constitución 5", "41004 Sevilla"],
     "details": [("Factura n.º", "F-2026/0912"), ("Fecha", "03/11/2026"), ("NIF cliente", "B41234567")],
     "title": "Factura",
     "totals": [("Base imponible", "1.398,90"), ("IVA 10 %", "139,89"), ("Total", "1.538,79")]})

_add(Layout("invoice-it", "invoice", "it", [TableSpec(
    [["Cod.", "Descrizione", "Q.tà", "Prezzo unit.", "Totale"]],
    [["FB-220", "Trapano avvitatore a batteria 18 V con due batterie e valigetta", "2", "129,00", "258,00"],
     ["FB-318", "Set punte per legno 8 pezzi", "5", "12,40", "62,00"],
     ["FB-407", "Livella a bolla 60 cm", "3", "17,90", "53,70"],
     ["FB-511", "Guanti da lavoro in pelle taglia 10", "12", "4,25", "51,00"],
     ["FB-690", "Scala in alluminio a 6 gradini con piattaforma e gancio portasecchio", "1", "89,00", "89,00"]],
    [55, 250, 40, 80, 90], "llrrr", "hrules")], "invoice",
    {"dpi": 300, "skew": 0.5, "blur": 0.8, "noise": 8, "format": "png", "seed": 24}),
    {"sender": "Ferramenta Bellini S.r.l.", "sender_line": "Ferramenta Bellini S.r.l. · Via Roma 41 · 50123 Firenze",
     "address": ["Falegnameria Conti", "Via dei Serragli 18", "50124 Firenze"],
     "details": [("Fattura n.", "318/2026"), ("Data", "20/11/2026"), ("P. IVA", "05123450487")],
     "title": "Fattura",
     "totals": [("Imponibile", "513,70"), ("IVA 22 %", "113,01"), ("Totale fattura", "626,71")]})

# --- price lists -----------------------------------------------------------------------------

_add(Layout("pricelist-sv", "price_list", "sv", [TableSpec(
    [["Artikel", "Storlek", "Pris (kr)", "Medlemspris (kr)"]],
    [["Kaffe", "", "", ""],
     ["Bryggkaffe", "Liten", "28", "25"],
     ["Cappuccino", "Stor", "46", "41"],
     ["Chai latte med havremjölk", "Stor", "52", "47"],
     ["Bakverk", "", "", ""],
     ["Kanelbulle", "1 st", "32", "29"],
     ["Kardemummabulle", "1 st", "34", "30"],
     ["Prinsesstårta, bit", "1 bit", "58", "52"],
     ["Smörgåsar", "", "", ""],
     ["Räksmörgås på surdegsbröd", "1 st", "119", "109"],
     ["Ost och skinka", "1 st", "69", "62"]],
    [200, 90, 100, 125], "llrr", "unruled", sections={0, 4, 8})], "pricelist",
    {"dpi": 200, "skew": 0.25, "blur": 0.6, "noise": 7, "format": "png", "seed": 31}),
    {"title": "Prislista 2027 – Café Lindgården",
     "intro": "Priserna gäller från den 1 januari 2027 och inkluderar moms. Medlemspriset gäller med "
              "giltigt medlemskort. Fråga personalen om allergener och glutenfria alternativ."})

_add(Layout("pricelist-nl", "price_list", "nl", [TableSpec(
    [["Artikelnummer", "Omschrijving", "Eenheid", "Prijs excl. btw", "Prijs incl. btw"]],
    [["TG-1001", "Spade gehard staal", "stuk", "24,75", "29,95"],
     ["TG-1017", "Hark 14 tanden", "stuk", "16,49", "19,95"],
     ["TG-2040", "Potgrond universeel 40 liter", "zak", "4,95", "5,99"],
     ["TG-2108", "Tuinslang 25 m met spuitpistool en koppelstukken", "set", "32,19", "38,95"],
     ["TG-3300", "Graszaad sport en spel 1 kg", "doos", "8,26", "9,99"],
     ["TG-4012", "Snoeischaar bypass", "stuk", "19,79", "23,95"],
     ["TG-5150", "Kruiwagen 85 liter", "stuk", "61,12", "73,95"]],
    [80, 185, 60, 95, 95], "lllrr", "grey-hrules")], "pricelist",
    {"dpi": 150, "skew": -0.8, "blur": 0.5, "noise": 6, "format": "pdf", "quality": 80, "seed": 32}),
    {"title": "Prijslijst tuinmaterialen voorjaar 2027",
     "intro": "Alle prijzen zijn in euro. Wijzigingen en drukfouten voorbehouden. Bestellingen boven "
              "de 150 euro worden gratis bezorgd binnen Utrecht en omgeving."})

_add(Layout("pricelist-da", "price_list", "da", [TableSpec(
    [["Ydelse", "Enhed", "Pris (kr.)", ""], ["", "", "ekskl. moms", "inkl. moms"]],
    [["Flytning, lille lejlighed", "pr. time", "640", "800"],
     ["Flytning, hus med kælder og loft", "pr. time", "880", "1.100"],
     ["Kørsel uden for København", "pr. km", "12", "15"],
     ["Opbevaring i container", "pr. måned", "1.196", "1.495"],
     ["Flyttekasser, pakke med 20 stk.", "pr. pakke", "316", "395"],
     ["Bortskaffelse af storskrald", "pr. m³", "360", "450"]],
    [215, 100, 100, 100], "llrr", "grid", spans=[(0, 0, 2, 1), (0, 1, 2, 1), (0, 2, 1, 2)])], "pricelist",
    {"dpi": 300, "skew": 0.4, "blur": 0.8, "noise": 9, "format": "jpg", "quality": 72, "seed": 33}),
    {"title": "Prisliste – Vognmand Sørensen",
     "intro": "Priserne gælder fra 1. februar 2027. Ved flytning i weekenden tillægges 25 procent. "
              "Kontakt os for et uforpligtende tilbud på større opgaver."})

_add(Layout("pricelist-zh", "price_list", "zh", [TableSpec(
    [["编号", "品名", "规格", "单价（元）"]],
    [["A01", "龙井绿茶", "250克", "168.00"],
     ["A02", "碧螺春", "250克", "138.00"],
     ["A03", "安吉白茶", "200克", "226.00"],
     ["B01", "云南普洱熟茶饼", "357克", "98.00"],
     ["B02", "武夷山大红袍", "250克", "188.00"],
     ["C01", "紫砂茶壶", "300毫升", "420.00"],
     ["C02", "青瓷茶杯", "6只装", "86.00"]],
    [70, 200, 110, 110], "lllr", "unruled")], "pricelist",
    {"dpi": 300, "skew": -0.35, "blur": 0.7, "noise": 8, "format": "png", "seed": 34}),
    {"title": "西湖茶庄价目表",
     "intro": "以下价格自2027年1月1日起执行，均含增值税。会员凭卡享受九五折优惠，团购请咨询门店工作人员。"})

# --- tables of papers ------------------------------------------------------------------------

_add(Layout("science-en", "scientific", "en", [TableSpec(
    [["System", "Clean", "", "Noisy", "", "Params (M)"], ["", "dev", "test", "dev", "test", ""]],
    [["HMM-GMM baseline", "12.4", "13.1", "31.8", "34.2", "4.2"],
     ["CTC BiLSTM", "8.7", "9.3", "24.5", "26.0", "28.6"],
     ["Transformer", "6.1", "6.6", "19.7", "21.3", "71.0"],
     ["Conformer", "5.4", "5.9", "17.2", "18.8", "118.5"],
     ["Conformer + LM", "4.8", "5.2", "15.9", "17.4", "118.5"]],
    [150, 60, 60, 60, 60, 80], "lrrrrr", "hrules",
    spans=[(0, 0, 2, 1), (0, 1, 1, 2), (0, 3, 1, 2), (0, 5, 2, 1)]),
    TableSpec([["Setting", "Value"]],
              [["Beam width", "8"], ["LM weight", "0.35"], ["Frame shift", "10 ms"], ["Batch size", "64"]],
              [150, 80], "lr", "hrules")], "paper",
    {"dpi": 300, "skew": 0.15, "blur": 0.7, "noise": 7, "format": "png", "seed": 41}),
    {"intro": "We compare five recognisers on the clean and the noisy part of the corpus. All systems are "
              "trained on the same 960 hours; the noisy sets add babble and street noise at 0 to 10 dB. "
              "Table 2 gives the word error rates, Table 3 the decoding settings shared by all systems.",
     "caption": "Table 2: Word error rate (%) on the development and test sets.",
     "caption2": "Table 3: Decoding settings."})

_add(Layout("science-ja", "scientific", "ja", [TableSpec(
    [["手法", "精度 (%)", "再現率 (%)", "F値", "処理時間 (秒)"]],
    [["ルールベース", "71.2", "64.8", "67.8", "0.4"],
     ["サポートベクターマシン", "82.5", "79.1", "80.8", "2.1"],
     ["ランダムフォレスト", "84.0", "80.6", "82.3", "3.5"],
     ["提案手法", "89.3", "87.2", "88.2", "4.8"]],
    [170, 80, 85, 70, 90], "lrrrr", "grid")], "paper",
    {"dpi": 200, "skew": -0.25, "blur": 0.6, "noise": 8, "format": "jpg", "quality": 75, "seed": 42}),
    {"intro": "本研究では、提案手法を三つの既存手法と比較した。評価には公開データセットを用い、"
              "五回の交差検証の平均値を示す。処理時間は一文書あたりの平均である。",
     "caption": "表1 各手法の評価結果"})

_add(Layout("science-pt", "scientific", "pt", [TableSpec(
    [["Característica", "Grupo de intervenção", "Grupo de controlo", "Valor p"]],
    [["Idade média (anos)", "54,2", "55,0", "0,61"],
     ["Sexo feminino (%)", "48,5", "51,2", "0,44"],
     ["Índice de massa corporal médio no início do estudo (kg/m²)", "27,9", "28,3", "0,37"],
     ["Fumadores (%)", "17,1", "19,4", "0,52"],
     ["Hipertensão arterial diagnosticada antes da inclusão (%)", "39,0", "41,7", "0,58"]],
    [215, 105, 105, 70], "lrrr", "hrules")], "paper",
    {"dpi": 150, "skew": 0.6, "blur": 0.5, "noise": 7, "format": "png", "seed": 43}),
    {"intro": "Foram incluídos 412 participantes, distribuídos aleatoriamente por dois grupos. As "
              "características no início do estudo não diferiram de forma significativa entre os grupos.",
     "caption": "Tabela 3: Características dos participantes do estudo (n = 412)."})
