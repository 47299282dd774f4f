"""The pages spider, collecting text to train AI models on."""

from myproject.spiders.pages import PagesSpider


class TrainingSpider(PagesSpider):
    """``scrapy crawl training -a start_url=URL``: keeps no page whose site or page refuses
    AI training, and records which robots.txt let each page through."""

    name = "training"
    custom_settings = {  # noqa: RUF012 (Scrapy's own way to give one spider its settings)
        # Drop the items of pages that refuse this use. Naming an AI use also makes the crawl
        # consult TDMRep (tdmrep.json, tdm-reservation headers and metas).
        "ROBOTSMETA_PURPOSE": ["ai-train"],
        # One record per robots.txt fetch in force; each item references its record.
        "ROBOTSTXT_EVIDENCE_FILE": "evidence.jsonl",
    }
