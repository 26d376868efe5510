#!/usr/bin/env Rscript
# Write the regression and count data sets that treekit bundles from R's own packages
# (R 4.2.2's datasets package and rpart 4.1.19, from Debian's r-base-core and r-cran-rpart):
#
#   Rscript scripts/export_r_datasets.R      (from the repository root)
#
# One CSV per data set into treekit_core/datasets/data: the predictors, then the response
# as the last column; NA is an empty field. Ordered factors (Reliability) are written as
# their level numbers 1..5, so R (reading the CSV back) and treekit both see numbers;
# unordered factors keep their level names.
suppressPackageStartupMessages(library(rpart))
out <- file.path("treekit_core", "datasets", "data")
write_set <- function(frame, response, name) {
  frame <- frame[, c(setdiff(names(frame), response), response)]
  for (column in names(frame)) {
    if (is.ordered(frame[[column]])) frame[[column]] <- as.integer(frame[[column]])
  }
  write.csv(frame, file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "",
            quote = FALSE)
}
write_set(datasets::airquality, "Ozone", "airquality")
write_set(datasets::quakes, "mag", "quakes")
write_set(datasets::warpbreaks, "breaks", "warpbreaks")
write_set(rpart::cu.summary, "Price", "cu_summary")
write_set(rpart::car.test.frame, "Mileage", "car_test_frame")
write_set(rpart::solder, "skips", "solder")

# Censored follow-up (survival 3.5.3, Debian's r-cran-survival): the predictors, then the
# follow-up time and the event indicator (1 = the event, 0 = censored) as the last two
# columns, "time" and "status".
suppressPackageStartupMessages(library(survival))
write_survival <- function(frame, name) {
  frame <- frame[, c(setdiff(names(frame), c("time", "status")), "time", "status")]
  write.csv(frame, file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "",
            quote = FALSE)
}
lung <- survival::lung
lung$status <- lung$status - 1L  # 1 censored, 2 dead in survival's coding
write_survival(lung, "lung")
write_survival(survival::veteran, "veteran")
pbc <- survival::pbc[, setdiff(names(survival::pbc), "id")]
pbc$status <- as.integer(pbc$status == 2)  # death; a transplant (1) censors follow-up
write_survival(pbc, "pbc")
# German Breast Cancer Study Group 2 (survival::gbsg): recurrence-free survival, the
# identifier dropped; rfstime (days) is the follow-up.
gbsg <- survival::gbsg[, c("age", "meno", "size", "grade", "nodes", "pgr", "er", "hormon",
                           "rfstime", "status")]
names(gbsg)[names(gbsg) == "rfstime"] <- "time"
write_survival(gbsg, "gbsg")
# Adjuvant chemotherapy for colon cancer (survival::colon): the death records (etype 2),
# identifiers and the event type dropped; rx nominal (Obs, Lev, Lev+5FU).
colon <- subset(survival::colon, etype == 2)
colon <- colon[, c("rx", "sex", "age", "obstruct", "perfor", "adhere", "nodes", "differ",
                   "extent", "surg", "node4", "time", "status")]
write_survival(colon, "colon")

# Competing risks (survival 3.5.3): monoclonal gammopathy (survival::mgus2), follow-up to
# progression to a plasma cell malignancy (event 1) or death before it (event 2), else
# censored (0), as survival's competing-risks vignette codes it; the predictors then
# "time" (months) and "event" as the last two columns; identifiers and the raw times dropped.
mgus2 <- survival::mgus2
mgus2$time <- ifelse(mgus2$pstat == 0, mgus2$futime, mgus2$ptime)
mgus2$event <- ifelse(mgus2$pstat == 0, 2L * mgus2$death, 1L)
mgus2 <- mgus2[, c("age", "sex", "dxyr", "hgb", "creat", "mspike", "time", "event")]
write.csv(mgus2, file.path(out, "mgus2.csv"), row.names = FALSE, na = "", quote = FALSE)
